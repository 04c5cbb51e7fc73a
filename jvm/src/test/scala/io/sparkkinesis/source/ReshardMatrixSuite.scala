package io.sparkkinesis.source

import java.nio.file.Files
import java.util.concurrent.TimeUnit

import io.sparkkinesis.compat.CollectionConverters._

import org.apache.spark.sql.streaming.{StreamingQuery, Trigger}
import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.fetching.{FaultySubscriptions, SubscriptionSource}
import io.sparkkinesis.testing.{Integration, LocalKinesisServer, LocalKinesisServers, Resharding, SharedSparkSession}
import io.sparkkinesis.testing.TestStreams._

/**
 * Every micro-batch trigger (processing time, AvailableNow, Once) in both fetch modes (GetRecords, enhanced fan-out)
 * on streams resharded before the query starts and while it runs, on kinesis-mock (the local server with fan-out
 * and UpdateShardCount): every record once, each key in order, a child's records after its parents' (real-time mode
 * is in `RealTimeModeSuite`). kinesis-mock never ends a closed shard's subscription; the service does, with its
 * child shards: the `efo+end` cells play that through [[FaultySubscriptions]]. AvailableNow and Once queries must
 * end by themselves. docs/testing.md ("Resharding matrix") maps each cell to its test.
 */
@Integration
class ReshardMatrixSuite extends AnyFunSuite with LocalKinesisServers with SharedSparkSession {
  import FanOutSourceSuite.Rows
  import Resharding._

  private def server: LocalKinesisServer = kinesisMock

  /** How long an AvailableNow or Once run may take to end by itself. */
  private val EndWithinSeconds = 180

  private def sourceOptions(stream: String, mode: String): Map[String, String] =
    options(server, stream) ++ Map("initialPosition" -> "trim_horizon", "shardDiscoveryInterval" -> "1s",
      "minFetchPeriod" -> "100ms") ++
      (if (mode == "polling") Map.empty else Map("consumerMode" -> "efo", "requireConsumerDeregistration" -> "true"))

  private def start(
      stream: String,
      mode: String,
      checkpoint: String,
      trigger: Trigger,
      sink: Rows,
      extra: Map[String, String] = Map.empty): StreamingQuery =
    spark.readStream.format("kinesis").options(sourceOptions(stream, mode) ++ extra).load()
      .selectExpr("CAST(data AS STRING) AS data", "partitionKey", "shardId")
      .writeStream.foreachBatch(sink).option("checkpointLocation", checkpoint).trigger(trigger).start()

  /** Runs `body` with fan-out subscriptions through the service's shard-end events (`efo+end`), else as they are. */
  private def subscriptions[T](mode: String, stream: String)(body: => T): T =
    if (mode != "efo+end") body
    else
      FaultySubscriptions.through(new FaultySubscriptions(SubscriptionSource.of(connection(server)),
          syncClient(server), stream, signalShardEnd = true))(body)

  private def await(query: StreamingQuery, what: => String, seconds: Int = 180)(done: => Boolean): Unit = {
    val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds.toLong)
    while (!done) {
      query.exception.foreach(e => fail(e))
      assert(System.nanoTime() < deadline, s"$what: not within $seconds s")
      Thread.sleep(100)
    }
  }

  /** Waits for an AvailableNow or Once run to end by itself, failing with what it read if it does not. */
  private def endsByItself(query: StreamingQuery, sink: Rows, what: String): Unit = {
    val ended =
      try query.awaitTermination(TimeUnit.SECONDS.toMillis(EndWithinSeconds.toLong))
      finally if (query.isActive) query.stop()
    query.exception.foreach(e => fail(e))
    assert(ended,
      s"$what did not end by itself within $EndWithinSeconds s; it read ${sink.rows.size()} rows, " +
        s"by shard ${sink.rows.asScala.groupBy(_._4).map(e => e._1 -> e._2.size)}")
  }

  /** What `sink` has read of `expected` so far, by shard, and the shards of the ids it has not read yet. */
  private def progress(sink: Rows, stream: String, expected: Seq[Int]): String = {
    val read = sink.rows.asScala.map(_._2.toInt).toSet
    val missing = readAll(server, stream).filter(r => expected.contains(r.text.toInt) && !read.contains(r.text.toInt))
    s"read ${read.size} of ${expected.size}, by shard ${sink.rows.asScala.groupBy(_._4).map(e => e._1 -> e._2.size)}" +
      s"; not read yet, by shard: ${missing.groupBy(_.shardId).map(e => e._1 -> e._2.size)}; lineage " +
      parents(server, stream).filter(_._2.nonEmpty)
  }

  private def check(sink: Rows, stream: String, expected: Seq[Int], childrenLater: Boolean): Unit = {
    val found = problems(sink.rows.asScala.toSeq, expected, parents(server, stream), childrenLater)
    assert(found.isEmpty, found.mkString("\n"))
  }

  private val triggers = Seq("processing time", "AvailableNow", "Once")

  // Resharded before the query: a split, a merge and UpdateShardCount, records before and after each.
  for (mode <- Seq("polling", "efo"); trigger <- triggers) {
    test(s"$trigger, $mode: a stream resharded before the query is read whole, parents first") {
      val stream = freshStream(server, s"matrix-before-${mode.take(3)}", 2)
      val parts = Seq(0 until 150, 150 until 300, 300 until 450, 450 until 600)
      put(server, stream, records(0, 150))
      reshard(server, stream, parts, updateShardCount = true)
      awaitClockPastArrivals(server, stream)
      val sink = new Rows
      val checkpoint = Files.createTempDirectory("matrix-before").toString
      subscriptions(mode, stream) {
        trigger match {
          case "processing time" =>
            val query = start(stream, mode, checkpoint, Trigger.ProcessingTime("500 milliseconds"), sink)
            try await(query, progress(sink, stream, 0 until 600))(sink.rows.size() >= 600)
            finally query.stop()
          case "AvailableNow" =>
            endsByItself(start(stream, mode, checkpoint, Trigger.AvailableNow(), sink), sink, "AvailableNow")
          case "Once" =>
            endsByItself(start(stream, mode, checkpoint, Trigger.Once(), sink), sink, "Once")
        }
      }
      check(sink, stream, 0 until 600, childrenLater = trigger != "Once")
      if (trigger == "Once") assert(sink.rows.asScala.map(_._1).toSet == Set(0L), "one batch")
    }
  }

  // Resharded while the query runs. Processing time: records before, between and after the steps, all read.
  // AvailableNow and Once: the first batch reshards and puts more (after the run's start), the run ends by
  // itself with every record put before it; a second run reads the rest, children included, and ends too.
  for (mode <- Seq("polling", "efo", "efo+end"); trigger <- triggers) {
    test(s"$trigger, $mode: a stream resharded while the query runs is read whole, parents first") {
      val stream = freshStream(server, s"matrix-during-${mode.take(3)}", 2)
      val parts = Seq(0 until 200, 200 until 300, 300 until 400)
      put(server, stream, records(0, 200))
      val checkpoint = Files.createTempDirectory("matrix-during").toString
      subscriptions(mode, stream) {
        trigger match {
          case "processing time" =>
            val sink = new Rows
            val query = start(stream, mode, checkpoint, Trigger.ProcessingTime("500 milliseconds"), sink)
            try {
              await(query, "the first 200 records")(sink.rows.size() >= 200)
              reshard(server, stream, parts, updateShardCount = false)
              await(query, progress(sink, stream, 0 until 400))(sink.rows.size() >= 400)
            } finally query.stop()
            check(sink, stream, 0 until 400, childrenLater = true)
          case _ =>
            awaitClockPastArrivals(server, stream)
            val t = if (trigger == "Once") Trigger.Once() else Trigger.AvailableNow()
            // AvailableNow in batches of 50, so that batches after the reshard belong to the same run.
            val limit = if (trigger == "Once") Map.empty[String, String] else Map("maxRecordsPerTrigger" -> "50")
            val first = new Rows(onBatch = id => if (id == 0L) reshard(server, stream, parts, updateShardCount = false))
            endsByItself(start(stream, mode, checkpoint, t, first, limit), first, s"$trigger (first run)")
            check(first, stream, 0 until 200, childrenLater = trigger != "Once")
            awaitClockPastArrivals(server, stream)
            val second = new Rows
            endsByItself(start(stream, mode, checkpoint, t, second, limit), second, s"$trigger (second run)")
            check(second, stream, 200 until 400, childrenLater = trigger != "Once")
        }
      }
    }
  }
}
