package io.sparkkinesis.source

import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.fetching.{FetchCounts, HeldRecords, ShardReading}
import io.sparkkinesis.offsets.ShardKey
import io.sparkkinesis.reader.ShardCut
import io.sparkkinesis.offsets.ShardPosition

/**
 * The backlog estimate: records not fetched yet are the rate records arrived at (learnt from what the fetcher read
 * over the stream time it moved through) times the stream time between the fetcher's position and now, plus those
 * buffered beyond the planned batches.
 */
class BacklogEstimateSuite extends AnyFunSuite {
  private val shard = ShardKey("orders", "shardId-000000000000")
  private val other = ShardKey("orders", "shardId-000000000001")

  test("rate times the stream time ahead of the fetcher, the rate from records read over the time moved through") {
    val b = new BacklogEstimate
    b.observe(shard, measuredAtMillis = 100000L, behind = 60000L, records = 0L, bytes = 0L)
    assert(b.aheadOfFetcher(shard, 100000L) == ((0L, 0L)), "no rate before the fetcher moved on")
    // 10 s later the fetcher had caught up 20 s: it moved 30 s through the stream and read 3,000 records.
    b.observe(shard, measuredAtMillis = 110000L, behind = 40000L, records = 3000L, bytes = 300000L)
    assert(b.aheadOfFetcher(shard, 110000L) == ((4000L, 400000L)), "100 a second for 40 s")
    // A fetcher that reads no more (its buffer holds enough) falls behind as the tip moves on.
    assert(b.aheadOfFetcher(shard, 120000L) == ((5000L, 500000L)))
    // The next span at 50 records a second: the rate is the mean of the two, 75 a second.
    b.observe(shard, measuredAtMillis = 120000L, behind = 40000L, records = 3500L, bytes = 350000L)
    assert(b.aheadOfFetcher(shard, 120000L) == ((3000L, 300000L)))
    assert(b.aheadOfFetcher(other, 120000L) == ((0L, 0L)))
    b.forget(Set(shard))
    assert(b.aheadOfFetcher(shard, 120000L) == ((0L, 0L)))
  }

  test("the same reading seen again teaches nothing; a quiet stretch lowers the rate") {
    val b = new BacklogEstimate
    b.observe(shard, 100000L, 0L, 0L, 0L)
    b.observe(shard, 101000L, 0L, 1000L, 1000L)
    assert(b.aheadOfFetcher(shard, 102000L) == ((1000L, 1000L)), "1,000 records a second, 1 s since the reading")
    b.observe(shard, 101000L, 0L, 1000L, 1000L) // a later round showing the same reading
    assert(b.aheadOfFetcher(shard, 102000L) == ((1000L, 1000L)))
    b.observe(shard, 103000L, 0L, 1000L, 1000L) // two seconds with nothing new
    assert(b.aheadOfFetcher(shard, 104000L) == ((500L, 500L)), "the mean of 1,000 and 0 a second, 1 s")
  }

  test("before the fetcher moves on, the rate of the records its buffer holds, over 1 s of arrivals or more") {
    val b = new BacklogEstimate
    // 600 records held, the oldest arrived 3 s before the fetcher's position (caught up at 100 s): 200 a second.
    b.observe(shard, 100000L, 0L, 600L, 6000L, Some(HeldRecords(600L, 6000L, oldestArrivalMillis = 97000L)))
    assert(b.aheadOfFetcher(shard, 105000L) == ((1000L, 10000L)), "200 a second for the 5 s since")
    // A burst (all within half a second) gives no rate.
    b.observe(other, 100000L, 0L, 600L, 6000L, Some(HeldRecords(600L, 6000L, oldestArrivalMillis = 99500L)))
    assert(b.aheadOfFetcher(other, 105000L) == ((0L, 0L)))
    // Once the fetcher moves on, the rate is learnt from what it read, as before.
    b.observe(shard, 110000L, 0L, 1600L, 16000L, Some(HeldRecords(100L, 1000L, oldestArrivalMillis = 109000L)))
    assert(b.aheadOfFetcher(shard, 111000L) == ((150L, 1500L)), "the mean of 200 and 100 a second")
  }

  private def cut(k: ShardKey, records: Long, behind: Long, buffered: Long) =
    ShardCut(ShardPosition.Ended, records, records * 10, caughtUp = false, shardEnded = false, pastCutoff = false,
      nextDueMillis = 0L,
      ShardReading(k, Some(behind), FetchCounts(calls = 1L, throttled = 1L), "executor_h_1",
        bufferedRecords = buffered, bufferedBytes = buffered * 10))

  test("real-time batches add the records and bytes their tasks handed on to the read totals, batch after batch") {
    val m = new SourceMetrics
    def batch(records: Long) =
      Seq(ShardReading(shard, Some(0L), FetchCounts(calls = 3L), "executor_h_1", deliveredRecords = records,
          deliveredBytes = records * 10), ShardReading(other, Some(0L), FetchCounts(calls = 3L), "executor_h_1"))
    m.accumulate(batch(40L))
    m.accumulate(batch(2L))
    val Seq(orders) = m.byStream(Seq("orders"))
    assert(orders.recordsRead == 42L && orders.bytesRead == 420L, orders)
  }

  test("real-time batches: the backlog at a batch's end is its tasks' read rate times their lag, held until the next") {
    val m = new SourceMetrics
    def end(records: Long, behind: Long) = Seq(ShardReading(shard, Some(behind), FetchCounts(calls = 3L),
        "executor_h_1", deliveredRecords = records, deliveredBytes = records * 10))
    m.accumulate(end(100L, 0L), nowMillis = 1000000L)
    assert(m.byStream(Seq("orders"), nowMillis = 1010000L).head.pendingRecords == 0L, "no rate after one batch")
    // 20 s later 3,000 more records were read and the tasks' last reads were 5 s behind: they moved through 15 s of
    // the stream at 200 records a second, and 5 s of it (1,000 records) are ahead of them.
    m.accumulate(end(3000L, 5000L), nowMillis = 1020000L)
    val atEnd = m.byStream(Seq("orders"), nowMillis = 1020000L).head
    assert(atEnd.pendingRecords == 1000L && atEnd.pendingBytes == 10000L, atEnd)
    // A minute on, with no batch end since: the tasks kept reading, so the estimate stays what it was at the end.
    assert(m.byStream(Seq("orders"), nowMillis = 1080000L).head == atEnd)
  }

  test("per stream: pending is the buffered records plus the estimate, read counts are what rounds planned") {
    val m = new SourceMetrics
    m.recordRound(Seq(cut(shard, 100L, 10000L, 50L), cut(other, 10L, 0L, 0L)), 1000000L)
    // 5 s later the first shard moved 10 s through the stream with 200 records more fetched (100 planned, 100 more
    // buffered): 20 records a second, 2 s behind.
    m.recordRound(Seq(cut(shard, 100L, 5000L, 150L)), 1005000L)
    val Seq(orders) = m.byStream(Seq("orders"), nowMillis = 1005000L)
    assert(orders.recordsRead == 210L && orders.bytesRead == 2100L)
    assert(orders.pendingRecords == 150L + 100L, orders)
    assert(orders.pendingBytes == 1500L + 1000L, orders)
    assert(orders.maxMsBehindLatest == 5000L && orders.avgMsBehindLatest == 2500d)
    assert(orders.throttledCalls == 2L)
    m.forget(Set(shard))
    val Seq(after) = m.byStream(Seq("orders"), nowMillis = 1005000L)
    assert(after.recordsRead == 210L && after.throttledCalls == 2L, "the totals keep what forgotten shards counted")
    assert(after.pendingRecords == 0L)
  }
}
