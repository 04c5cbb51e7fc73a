package io.sparkkinesis.reader

import java.util.UUID

import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.aws.{AwsConnection, CredentialsConfig, StreamRef}
import io.sparkkinesis.fetching.{FetchSettings, ReadMode}
import io.sparkkinesis.offsets.{ShardKey, ShardPosition, StartPosition}
import io.sparkkinesis.testing.SharedSparkSession

/**
 * Nothing of the executor's buffers outlives its use: buffers no task asks for are dropped and closed by the sweep
 * without any task running, and a retried prefetch attempt opens no second fan-out subscription. No server: the
 * buffers here make no call (a budget of no records reads nothing).
 */
class PrefetcherSuite extends AnyFunSuite with SharedSparkSession {
  private val stream = StreamRef("orders", None, None)
  private val connection = AwsConnection("us-east-1", Some("http://127.0.0.1:1"),
    CredentialsConfig.StaticKeys("test-key", "test-secret", None), cborEnabled = false)
  private val efo = FetchSettings(maxRecordsPerCall = 100, minPeriodMillis = 200L,
    mode = ReadMode.FanOut(Map("orders" -> "arn:aws:kinesis:us-east-1:123456789012:stream/orders/consumer/c:1")))

  test("a buffer no task has used for the idle time is dropped and closed by the sweep, with no task running") {
    val source = UUID.randomUUID().toString
    val key = ShardKey("orders", "shardId-000000000000")
    val buffer =
      ShardSessions.shared.buffer(source, key, efo, replaceMisfit = true)(new ShardBuffer(key, stream, connection, efo))
    buffer.lastUsed = System.currentTimeMillis() - ShardSessions.BufferIdleMillis - 1000
    val deadline = System.nanoTime() + (ShardSessions.SweepMillis * 3) * 1000L * 1000
    while (ShardSessions.shared.buffer(source, key).isDefined) {
      assert(System.nanoTime() < deadline, "the idle buffer is still there after three sweeps")
      Thread.sleep(100)
    }
    assert(buffer.closed)
  }

  test("a retried prefetch attempt that finds no buffer on its executor reads by GetRecords, not a subscription") {
    def round(readAhead: Boolean): ShardBuffer = {
      val source = UUID.randomUUID().toString
      val key = ShardKey("orders", "shardId-000000000001")
      val request = ShardFetchRequest(key, stream, ShardPosition.NotStarted(StartPosition.TrimHorizon),
        maxRecords = 0L, maxBytes = 0L)
      spark.sparkContext // the executor's location comes from SparkEnv
      Prefetcher.run(FetchTaskSpec(source, Seq(request), connection, efo, None, None), readAhead)
      try ShardSessions.shared.buffer(source, key).get
      finally ShardSessions.shared.retire(Seq(source))
    }
    assert(round(readAhead = true).readsByFanOut, "a first attempt reads by the query's consumer")
    assert(!round(readAhead = false).readsByFanOut, "a retried attempt would open a second subscription")
  }

  test("a first attempt after a retried one on the same executor reads by the consumer again, not by GetRecords") {
    val source = UUID.randomUUID().toString
    val key = ShardKey("orders", "shardId-000000000002")
    val request = ShardFetchRequest(key, stream, ShardPosition.NotStarted(StartPosition.TrimHorizon),
      maxRecords = 0L, maxBytes = 0L)
    spark.sparkContext
    try {
      // A retried attempt of round 1 lands here, where the shard has no buffer yet: it reads by GetRecords.
      Prefetcher.run(FetchTaskSpec(source, Seq(request), connection, efo, None, None), readAhead = false)
      val retried = ShardSessions.shared.buffer(source, key).get
      assert(!retried.readsByFanOut)
      // Round 2's first attempt is placed where round 1 reported the shard: here.
      Prefetcher.run(FetchTaskSpec(source, Seq(request), connection, efo, None, None), readAhead = true)
      val now = ShardSessions.shared.buffer(source, key).get
      assert(now.readsByFanOut, "the query's rounds read the shard by GetRecords for good after one retried attempt")
      assert(retried.closed, "the retried attempt's buffer is let go")
      // A retried attempt that finds the query's buffer uses it as it is: it neither replaces nor subscribes twice.
      Prefetcher.run(FetchTaskSpec(source, Seq(request), connection, efo, None, None), readAhead = false)
      assert(ShardSessions.shared.buffer(source, key).get eq now)
    } finally ShardSessions.shared.retire(Seq(source))
  }
}
