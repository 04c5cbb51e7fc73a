package io.sparkkinesis.source

import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.offsets.{KinesisSourceOffset, RecordPosition, ShardKey, ShardPosition}
import io.sparkkinesis.fetching.{FetchCounts, ShardReading}

/**
 * The source's metrics speak of the shards being read: lag never comes from a shard read to its end or one that left
 * the offset (expired with the stream's retention), while the running totals keep what such shards counted.
 */
class SourceMetricsSuite extends AnyFunSuite {
  private def key(n: Int) = ShardKey("orders", f"shardId-$n%012d")
  private def after(seq: Long): ShardPosition = ShardPosition.After(RecordPosition(seq.toString, 0L, true))

  private def report(k: ShardKey, lagMillis: Long, calls: Long) =
    ShardReading(k, millisBehindLatest = Some(lagMillis), FetchCounts(calls = calls, throttled = 1L),
      location = "executor_h_1")

  test("lag covers only the shards the offset reads: not one read to its end, nor one that left the offset") {
    val metrics = new SourceMetrics
    // The expired shard's last report said an hour behind; the ended one's ten minutes.
    metrics.record(Seq(report(key(0), 3600000L, 40L), report(key(1), 600000L, 30L), report(key(2), 2000L, 20L),
        report(key(3), 4000L, 10L)))
    val consumed = KinesisSourceOffset(Map(key(1) -> ShardPosition.Ended, key(2) -> after(5), key(3) -> after(7)))
    val shown = metrics.snapshot(Some(consumed))
    assert(shown("maxMsBehindLatest") == "4000", shown)
    assert(shown("minMsBehindLatest") == "2000", shown)
    assert(shown("avgMsBehindLatest") == "3000.0", shown)
    assert(shown("getRecordsCalls") == "100" && shown("throttledCalls") == "4", "totals count every shard read")
  }

  test("forgetting a shard that left the offset keeps its counts in the totals") {
    val metrics = new SourceMetrics
    metrics.record(Seq(report(key(0), 3600000L, 40L), report(key(2), 2000L, 20L)))
    metrics.forget(Set(key(0)))
    val shown = metrics.snapshot(None)
    assert(shown("maxMsBehindLatest") == "2000", shown)
    assert(shown("getRecordsCalls") == "60" && shown("throttledCalls") == "2", shown)
  }
}
