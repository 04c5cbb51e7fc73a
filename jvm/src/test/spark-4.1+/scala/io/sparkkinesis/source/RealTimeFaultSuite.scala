package io.sparkkinesis.source

import java.nio.file.Files

import org.apache.spark.sql.streaming.{StreamingQuery, Trigger}
import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.fetching.{FaultyGetRecords, FaultySubscriptions, SubscriptionSource}
import io.sparkkinesis.testing.{Integration, LocalKinesisServer, LocalKinesisServers, SharedSparkSession}
import io.sparkkinesis.testing.TestStreams._

/**
 * Real-time mode under the faults micro-batches retry (the one failure policy): a throttling storm, an expired
 * iterator, dropped connections and a broken fan-out subscription, each in a running five-minute batch on a local
 * server with a fault layer in front (what the servers cannot do on their own). Every record is read once, each key
 * in order, and the query does not fail. A shard that backs off holds up none of its task's other shards.
 */
@Integration
class RealTimeFaultSuite extends AnyFunSuite with LocalKinesisServers with SharedSparkSession
  with RealTimeQueries {
  import RealTimeModeSuite.{Collected, Got}

  /** One batch for the whole test: a task's failures are counted within its batch. */
  private val trigger = Trigger.RealTime("5 minutes")

  /** A real-time query of `stream` into a [[Collected]] sink named `sink`; both shards in one task. */
  private def start(
      server: LocalKinesisServer,
      stream: String,
      sink: String,
      extra: Map[String, String] = Map.empty): StreamingQuery =
    spark.readStream.format("kinesis")
      .options(options(server, stream) ++ Map("initialPosition" -> "trim_horizon", "minFetchPeriod" -> "50ms",
        "shardsPerTask" -> "2") ++ extra)
      .load()
      .selectExpr("CAST(data AS STRING) AS data", "partitionKey", "shardId", "sequenceNumber", "subSequenceNumber")
      .writeStream.foreach(new Collected(sink))
      .option("checkpointLocation", Files.createTempDirectory("rt-faults").toString)
      .outputMode("update").trigger(trigger).start()

  /** Every record put once, each key's records in the order they were put, none of another. */
  private def assertReadInOrder(rows: Seq[Got], written: Seq[(String, String)]): Unit = {
    assert(rows.map(_.data).sorted == written.map(_._2).sorted, "every record exactly once")
    rows.groupBy(_.key).foreach { case (key, rs) =>
      val order = rs.map(_.data.drop(1).toInt)
      assert(order == order.sorted, s"key $key out of order: $order")
    }
  }

  /**
   * A storm of `kind` faults on one shard of a two-shard stream whose shards one task reads, begun by `begin` once the
   * first records are read: the shard backs off past six faults in a row (where the reader used to retry in place,
   * holding the task), records put to the other shard meanwhile are read while the storm lasts, and once it ends
   * every record is read, each key in order.
   */
  private def storm(kind: String)(begin: (FaultyGetRecords, String) => Unit): Unit = {
    val server = kinesalite
    val stream = freshStream(server, s"rt-$kind", 2)
    val sink = s"$kind-${System.nanoTime()}"
    val layer = new FaultyGetRecords(syncClient(server))
    var written = records(0, 100)
    put(server, stream, written)
    FaultyGetRecords.through(layer) {
      val query = start(server, stream, sink)
      try {
        await(query, "the first 100 records")(Collected.rows(sink).size >= 100)
        val keysByShard = Collected.rows(sink).groupBy(_.shardId).map { case (s, rs) => s -> rs.map(_.key).toSet }
        assert(keysByShard.size == 2, keysByShard)
        val Seq(faulty, other) = keysByShard.keys.toSeq.sorted
        begin(layer, faulty)
        await(query, s"seven $kind faults in a row on $faulty")(layer.count(kind) >= 7)
        val meanwhile = records(100, 200).filter { case (k, _) => keysByShard(other).contains(k) }
        put(server, stream, meanwhile)
        written ++= meanwhile
        // Within the policy's budget (12 attempts, over 30 s): the storm is still on when these are read.
        await(query, s"the other shard's records during the storm (${layer.count(kind)} faults so far)", 20)(
          meanwhile.map(_._2).toSet.subsetOf(Collected.rows(sink).map(_.data).toSet))
        val during = layer.count(kind)
        layer.calm()
        val after = records(200, 300)
        put(server, stream, after)
        written ++= after
        await(query, s"all ${written.size} records after the storm")(Collected.rows(sink).size >= written.size)
        assert(query.exception.isEmpty && query.isActive)
        assert(during >= 7, s"$during faults")
      } finally query.stop()
    }
    assertReadInOrder(Collected.rows(sink), written)
  }

  test("a throttling storm on one shard: it backs off under the policy, its task's other shard goes on") {
    storm("throttled")((layer, shard) => layer.throttle(shard))
  }

  test("dropped connections on one shard: retried under the policy, its task's other shard goes on") {
    storm("dropped")((layer, shard) => layer.dropConnections(shard))
  }

  test("a storm that outlasts the policy fails the query with [KINESIS_RETRIES_EXHAUSTED], as a micro-batch would") {
    val server = kinesalite
    val stream = freshStream(server, "rt-exhausted", 1)
    val layer = new FaultyGetRecords(syncClient(server))
    put(server, stream, records(0, 10))
    FaultyGetRecords.through(layer) {
      val sink = s"exhausted-${System.nanoTime()}"
      val query = start(server, stream, sink)
      try {
        val deadline = System.nanoTime() + 60L * 1000 * 1000 * 1000
        while (Collected.rows(sink).size < 10 && System.nanoTime() < deadline) Thread.sleep(20)
        assert(Collected.rows(sink).size == 10, "the first records")
        layer.throttle(shards(server, stream).head.shardId())
        // 12 attempts with pauses of 0.1-0.2 s doubling up to 5-10 s: 31 to 63 s.
        val failure = intercept[Exception](query.awaitTermination(180000))
        assert(failure.getMessage.contains("[KINESIS_RETRIES_EXHAUSTED]"), failure.getMessage)
        assert(failure.getMessage.contains("after 12 attempts"), failure.getMessage)
        assert(layer.count("throttled") == 12, s"${layer.count("throttled")} throttled calls")
      } finally query.stop()
    }
  }

  test("expired iterators are renewed where the shard was, nothing lost or repeated") {
    val server = kinesalite
    val stream = freshStream(server, "rt-expired", 2)
    val sink = s"expired-${System.nanoTime()}"
    val layer = new FaultyGetRecords(syncClient(server))
    layer.expireEvery(3)
    put(server, stream, records(0, 100))
    FaultyGetRecords.through(layer) {
      val query = start(server, stream, sink, Map("maxRecordsPerFetch" -> "7"))
      try {
        await(query, "the first 100 records")(Collected.rows(sink).size >= 100)
        put(server, stream, records(100, 200))
        await(query, "200 records")(Collected.rows(sink).size >= 200)
        await(query, "expired iterators met")(layer.count("expired") >= 10)
        assert(query.exception.isEmpty && query.isActive)
      } finally query.stop()
    }
    assertReadInOrder(Collected.rows(sink), records(0, 200))
  }

  test("a broken fan-out subscription is opened again, read by GetRecords meanwhile, nothing lost or repeated") {
    val server = kinesisMock
    val stream = freshStream(server, "rt-efo-broken", 2)
    val sink = s"efo-broken-${System.nanoTime()}"
    val layer = new FaultySubscriptions(SubscriptionSource.of(connection(server)), syncClient(server), stream,
      takeOverFirst = true, failAfterEvents = Some(1))
    put(server, stream, records(0, 100))
    FaultySubscriptions.through(layer) {
      val query =
        start(server, stream, sink, Map("consumerMode" -> "efo", "requireConsumerDeregistration" -> "true"))
      try {
        await(query, "the first 100 records")(Collected.rows(sink).size >= 100)
        // The records may all have come by GetRecords while the first subscriptions were refused: wait for a
        // subscription that delivers, and breaks, then write more.
        await(query, "a subscription broken in the middle")(layer.breaks.get() >= 1)
        put(server, stream, records(100, 200))
        await(query, "200 records")(Collected.rows(sink).size >= 200)
        put(server, stream, records(200, 300))
        await(query, "300 records")(Collected.rows(sink).size >= 300)
        assert(query.exception.isEmpty && query.isActive)
      } finally query.stop()
    }
    assert(layer.takeOvers.get() == 2 && layer.breaks.get() >= 1,
      s"takeovers ${layer.takeOvers.get()}, breaks ${layer.breaks.get()}, subscribes ${layer.subscribes.get()}")
    assertReadInOrder(Collected.rows(sink), records(0, 300))
  }
}
