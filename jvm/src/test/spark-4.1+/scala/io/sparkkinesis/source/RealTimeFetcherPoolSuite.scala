package io.sparkkinesis.source

import java.nio.file.Files

import org.apache.spark.sql.streaming.{StreamingQuery, Trigger}
import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.fetching.{FaultyGetRecords, FaultySubscriptions, SubscriptionSource}
import io.sparkkinesis.reader.ShardSessions
import io.sparkkinesis.testing.{Integration, LocalKinesisServer, LocalKinesisServers, SharedSparkSession}
import io.sparkkinesis.testing.TestStreams._

/**
 * Real-time mode's fetchers outlive its batches (`fetching.FetcherPool`): over several short batches of a steady
 * query, the batches after the first open no shard iterator (GetRecords) or subscription (enhanced fan-out) anew,
 * counted by a fault layer that plays no fault, and every record is read once, each key in order. Once the query
 * stops, none of its fetchers is left pooled.
 */
@Integration
class RealTimeFetcherPoolSuite extends AnyFunSuite with LocalKinesisServers with SharedSparkSession
  with RealTimeQueries {
  import RealTimeModeSuite.{Collected, Got}

  override protected def beforeAll(): Unit = {
    super.beforeAll()
    spark.conf.set("spark.sql.streaming.realTimeMode.minBatchDuration", "1000")
  }

  private def start(server: LocalKinesisServer, stream: String, sink: String, extra: Map[String, String]) =
    spark.readStream.format("kinesis")
      .options(options(server, stream) ++ Map("initialPosition" -> "trim_horizon", "minFetchPeriod" -> "50ms") ++ extra)
      .load()
      .selectExpr("CAST(data AS STRING) AS data", "partitionKey", "shardId", "sequenceNumber", "subSequenceNumber")
      .writeStream.foreach(new Collected(sink))
      .option("checkpointLocation", Files.createTempDirectory("rt-pool").toString)
      .outputMode("update").trigger(Trigger.RealTime("3 seconds")).start()

  private def assertReadInOrder(rows: Seq[Got], count: Int): Unit = {
    assert(rows.map(_.data).sorted == (0 until count).map(i => s"r$i").sorted, "every record exactly once")
    rows.groupBy(_.key).foreach { case (key, rs) =>
      val order = rs.map(_.data.drop(1).toInt)
      assert(order == order.sorted, s"key $key out of order: $order")
    }
  }

  /**
   * A real-time query of a two-shard `stream` through at least four batches after its first, records put during
   * each: `openings` (by shard, or in all) grow by at most `limit` each over those batches.
   */
  private def steady(server: LocalKinesisServer, stream: String, extra: Map[String, String], limit: Int)(
      openings: => Map[String, Int]): Unit = {
    val sink = s"pool-${System.nanoTime()}"
    put(server, stream, records(0, 50))
    var written = 50
    val query = start(server, stream, sink, extra)
    try {
      await(query, "the first 50 records")(Collected.rows(sink).size >= 50)
      await(query, "the first batch's end")(query.recentProgress.nonEmpty)
      val before = openings
      val batchesBefore = query.recentProgress.length
      (1 to 4).foreach { round =>
        put(server, stream, records(written, written + 25))
        written += 25
        await(query, s"$written records")(Collected.rows(sink).size >= written)
        await(query, s"batch ${batchesBefore + round} ended")(query.recentProgress.length >= batchesBefore + round)
      }
      val after = openings
      val grown = after.map { case (k, n) => k -> (n - before.getOrElse(k, 0)) }
      assert(grown.values.forall(_ <= limit),
        s"over ${query.recentProgress.length - batchesBefore} batches after the first: opened $grown (before: $before)")
      assert(query.exception.isEmpty && query.isActive)
      assert(ShardSessions.shared.size > 0, "no fetcher pooled between batches")
    } finally query.stop()
    // The stopped query's pooled fetchers are closed (the suite's queries run one at a time): within a second here,
    // more than 10 s once on a machine busy with CI's three lanes.
    val deadline = System.nanoTime() + 60L * 1000 * 1000 * 1000
    while (ShardSessions.shared.size > 0 && System.nanoTime() < deadline) Thread.sleep(20)
    assert(ShardSessions.shared.size == 0, "the stopped query's fetchers still pooled")
    assertReadInOrder(Collected.rows(sink), written)
  }

  test("polling: batches after the first make at most one GetShardIterator per shard, every record once in order") {
    val server = kinesalite
    val stream = freshStream(server, "rt-pool-poll", 2)
    val layer = new FaultyGetRecords(syncClient(server))
    val ids = shards(server, stream).map(_.shardId())
    FaultyGetRecords.through(layer) {
      steady(server, stream, Map.empty, limit = 1)(ids.map(id => id -> layer.shardIterators(id)).toMap)
    }
  }

  test("fan-out: batches after the first make at most one SubscribeToShard per shard, every record once in order") {
    val server = kinesisMock
    val stream = freshStream(server, "rt-pool-efo", 2)
    val layer = new FaultySubscriptions(SubscriptionSource.of(connection(server)), syncClient(server), stream)
    FaultySubscriptions.through(layer) {
      steady(server, stream, Map("consumerMode" -> "efo", "requireConsumerDeregistration" -> "true"), limit = 2)(
        Map("all shards" -> layer.subscribes.get()))
    }
  }
}
