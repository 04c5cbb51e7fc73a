package io.sparkkinesis.source

import java.nio.file.Files
import java.util.concurrent.ConcurrentLinkedQueue

import io.sparkkinesis.compat.CollectionConverters._

import org.apache.spark.api.java.function.VoidFunction2
import org.apache.spark.sql.{Dataset, Row}
import org.apache.spark.sql.streaming.{StreamingQuery, Trigger}
import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.services.kinesis.model._

import io.sparkkinesis.aws.StreamRef
import io.sparkkinesis.fetching.{FanOutShardFetcher, FaultySubscriptions, SubscriptionSource}
import io.sparkkinesis.offsets.StartPosition
import io.sparkkinesis.testing.{Integration, LocalKinesisServer, LocalKinesisServers, QueryWaits, SharedSparkSession}
import io.sparkkinesis.testing.TestStreams._

/**
 * Enhanced fan-out end to end on kinesis-mock, the local server that serves consumers and SubscribeToShard over
 * HTTP/2 (h2c on its plain port).
 */
@Integration
class FanOutSourceSuite extends AnyFunSuite with LocalKinesisServers with SharedSparkSession with QueryWaits {
  import FanOutSourceSuite._

  private def server: LocalKinesisServer = kinesisMock

  private def efo(stream: String, extra: Map[String, String] = Map.empty): Map[String, String] =
    options(server, stream) ++ Map("initialPosition" -> "trim_horizon", "consumerMode" -> "efo",
      "shardDiscoveryInterval" -> "1s") ++ extra

  /** A streaming query of `options` into a [[Rows]] sink. */
  private def start(options: Map[String, String], checkpoint: String, trigger: Trigger, sink: Rows): StreamingQuery =
    spark.readStream.format("kinesis").options(options).load()
      .selectExpr("CAST(data AS STRING) AS data", "partitionKey", "shardId")
      .writeStream.foreachBatch(sink).option("checkpointLocation", checkpoint).trigger(trigger).start()

  private def metric(query: StreamingQuery, name: String): String =
    Option(query.lastProgress).flatMap(p => p.sources.headOption).map(_.metrics.get(name)).orNull

  /** Registers `name` on `stream` with the SDK (not the code under test) and waits until it is ACTIVE. */
  private def registerConsumer(stream: String, name: String): String = {
    val client = syncClient(server)
    val streamArn = client.describeStreamSummary(DescribeStreamSummaryRequest.builder().streamName(stream).build())
      .streamDescriptionSummary().streamARN()
    val arn = client.registerStreamConsumer(
      RegisterStreamConsumerRequest.builder().streamARN(streamArn).consumerName(name).build()).consumer().consumerARN()
    val deadline = System.nanoTime() + 60L * 1000 * 1000 * 1000
    while (client.describeStreamConsumer(DescribeStreamConsumerRequest.builder().consumerARN(arn).build())
        .consumerDescription().consumerStatus() != ConsumerStatus.ACTIVE) {
      assert(System.nanoTime() < deadline, s"consumer $name did not become ACTIVE")
      Thread.sleep(50)
    }
    arn
  }

  test("a fan-out fetcher reads a shard of kinesis-mock over HTTP/2, in order, with one subscription") {
    val stream = freshStream(server, "efo-fetcher", 1)
    val arn = registerConsumer(stream, "fetcher-probe")
    put(server, stream, (0 until 300).map(i => "k" -> s"r$i"))
    val shardId = shards(server, stream).head.shardId()
    val fetcher = new FanOutShardFetcher(SubscriptionSource.of(connection(server)), arn, StreamRef(stream, None, None),
      shardId, StartPosition.TrimHorizon, 10000)
    try {
      val read = scala.collection.mutable.ArrayBuffer.empty[String]
      val deadline = System.nanoTime() + 60L * 1000 * 1000 * 1000
      while (read.size < 300 && System.nanoTime() < deadline) {
        read ++= fetcher.fetch().records.map(_.data().asUtf8String())
        Thread.sleep(20)
      }
      assert(read == (0 until 300).map(i => s"r$i"))
      put(server, stream, (300 until 310).map(i => "k" -> s"r$i"))
      while (read.size < 310 && System.nanoTime() < deadline) {
        read ++= fetcher.fetch().records.map(_.data().asUtf8String())
        Thread.sleep(20)
      }
      assert(read == (0 until 310).map(i => s"r$i"))
      assert(fetcher.opened == 1, "one subscription served every page")
    } finally fetcher.close()
  }

  test("a query in EFO mode reads every record once across subscriptions that end, and says how it reads") {
    val stream = freshStream(server, "efo-renew", 2)
    put(server, stream, (0 until 1000).map(i => s"k${i % 17}" -> s"r$i"))
    val checkpoint = Files.createTempDirectory("efo-renew").toString
    val layer = new FaultySubscriptions(SubscriptionSource.of(connection(server)), syncClient(server), stream,
      cutAfterEvents = Some(2))
    val sink = new Rows
    FaultySubscriptions.through(layer) {
      val query = start(efo(stream), checkpoint, Trigger.ProcessingTime("500 milliseconds"), sink)
      try {
        await(query, "the first 1000 records")(sink.data.size >= 1000)
        put(server, stream, (1000 until 1200).map(i => s"k${i % 17}" -> s"r$i"))
        await(query, "1200 records")(sink.data.size >= 1200)
        await(query, "a progress with the subscriptions renewed")(
          Option(metric(query, "subscriptionsRenewed")).exists(_.toLong > 0))
        assert(metric(query, "consumerMode") == "efo")
        assert(metric(query, "consumerName").startsWith("spark-kinesis-"))
      } finally query.stop()
    }
    assert(layer.cuts.get() > 0, "the layer ended subscriptions")
    assert(sink.data.sorted == (0 until 1200).map(i => s"r$i").sorted, "every record once")
  }

  test("a split during an EFO read keeps per-key order, the parent read to its end before its children") {
    val stream = freshStream(server, "efo-split", 2)
    val keys = 12
    def records(from: Int, until: Int) = (from until until).map(i => s"k${i % keys}" -> s"${i / keys}:r$i")
    put(server, stream, records(0, 600))
    val checkpoint = Files.createTempDirectory("efo-split").toString
    val layer = new FaultySubscriptions(SubscriptionSource.of(connection(server)), syncClient(server), stream,
      signalShardEnd = true)
    val sink = new Rows
    FaultySubscriptions.through(layer) {
      val query = start(efo(stream), checkpoint, Trigger.ProcessingTime("500 milliseconds"), sink)
      try {
        await(query, "some records before the split")(sink.data.size >= 100)
        split(server, stream, shards(server, stream).head.shardId())
        put(server, stream, records(600, 1200))
        await(query, "every record after the split")(sink.data.size >= 1200)
      } finally query.stop()
    }
    // The parent ends by the subscription's end event (the layer's) or by the driver's listing, which reads a closed
    // shard to its end with GetRecords (issue 25), whichever comes first: which one depends on timing, so only what
    // both must give is checked here. FanOutShardFetcherSuite checks the end event's path on its own.
    assert(sink.data.sorted == records(0, 1200).map(_._2).sorted, "every record once")
    // Per key, the records in the order the batches delivered them carry increasing per-key numbers.
    val byKey = sink.rows.asScala.toSeq.groupBy(_._3)
    val disorder = byKey.collect {
      case (k, rows) if rows.map(_._2.takeWhile(_ != ':').toInt) != rows.map(_._2.takeWhile(_ != ':').toInt).sorted => k
    }
    assert(disorder.isEmpty, s"keys out of order: $disorder")
    val parent = shards(server, stream).head.shardId()
    val lastParentBatch = sink.rows.asScala.filter(_._4 == parent).map(_._1).max
    val children = shards(server, stream).filter(_.parentShardId() == parent).map(_.shardId()).toSet
    val firstChildBatch = sink.rows.asScala.filter(r => children.contains(r._4)).map(_._1).min
    assert(firstChildBatch > lastParentBatch,
      s"a child batch ($firstChildBatch) after the parent's last ($lastParentBatch)")
  }

  test("a takeover and a subscription broken in the middle lose nothing and repeat nothing") {
    val stream = freshStream(server, "efo-faults", 2)
    put(server, stream, (0 until 800).map(i => s"k${i % 9}" -> s"r$i"))
    val checkpoint = Files.createTempDirectory("efo-faults").toString
    val layer = new FaultySubscriptions(SubscriptionSource.of(connection(server)), syncClient(server), stream,
      takeOverFirst = true, failAfterEvents = Some(1))
    val sink = new Rows
    FaultySubscriptions.through(layer) {
      val query = start(efo(stream), checkpoint, Trigger.ProcessingTime("500 milliseconds"), sink)
      try {
        await(query, "800 records")(sink.data.size >= 800)
        // The records may all have come by GetRecords while the first subscriptions were refused: wait for a
        // subscription that delivers, and breaks, then write more.
        await(query, "a subscription broken in the middle")(layer.breaks.get() >= 1)
        put(server, stream, (800 until 900).map(i => s"k${i % 9}" -> s"r$i"))
        await(query, "900 records")(sink.data.size >= 900)
        // (The progress's `subscriptionsFailed` is not awaited here: on a machine busy with CI's lanes it stayed
        // under the three failures for 120 s twice while passing here in 24 s; an open item in docs/testing.md.)
      } finally query.stop()
    }
    assert(layer.takeOvers.get() == 2 && layer.breaks.get() >= 1,
      s"takeovers ${layer.takeOvers.get()}, breaks ${layer.breaks.get()}, subscribes ${layer.subscribes.get()}")
    assert(sink.data.sorted == (0 until 900).map(i => s"r$i").sorted, "every record once")
  }

  test("a restart reuses the query's consumer; requireConsumerDeregistration removes it when the query stops") {
    val stream = freshStream(server, "efo-consumer", 1)
    val checkpoint = Files.createTempDirectory("efo-consumer").toString
    def consumers(): Seq[String] = {
      val client = syncClient(server)
      val arn = client.describeStreamSummary(DescribeStreamSummaryRequest.builder().streamName(stream).build())
        .streamDescriptionSummary().streamARN()
      client.listStreamConsumers(ListStreamConsumersRequest.builder().streamARN(arn).build()).consumers().asScala
        .filter(_.consumerStatus() != ConsumerStatus.DELETING).map(_.consumerName()).toSeq
    }
    put(server, stream, Seq("k" -> "r0"))
    for ((extra, run) <- Seq(Map.empty[String, String], Map("requireConsumerDeregistration" -> "true")).zipWithIndex) {
      val sink = new Rows
      val query = start(efo(stream, extra), checkpoint, Trigger.ProcessingTime("500 milliseconds"), sink)
      try {
        put(server, stream, Seq("k" -> s"r${run + 1}"))
        await(query, s"run $run's record")(sink.data.contains(s"r${run + 1}"))
        assert(consumers().size == 1, s"one consumer in run $run: ${consumers()}")
      } finally query.stop()
    }
    val deadline = System.nanoTime() + 30L * 1000 * 1000 * 1000
    while (consumers().nonEmpty && System.nanoTime() < deadline) Thread.sleep(100)
    assert(consumers().isEmpty, "deregistered when the query stopped")
  }
}

object FanOutSourceSuite {

  /**
   * Rows of every batch: (batch id, data, partition key, shard id), in the order the batches delivered them.
   * `onBatch` runs after a batch's rows are kept, on the query's thread (to act while a query runs).
   */
  final class Rows(onBatch: Long => Unit = _ => ()) extends VoidFunction2[Dataset[Row], java.lang.Long] {
    val rows = new ConcurrentLinkedQueue[(Long, String, String, String)]()
    override def call(batch: Dataset[Row], id: java.lang.Long): Unit = {
      batch.collect().foreach(r => rows.add((id.longValue(), r.getString(0), r.getString(1), r.getString(2))))
      onBatch(id.longValue())
    }
    def data: Seq[String] = rows.asScala.map(_._2).toSeq
  }
}
