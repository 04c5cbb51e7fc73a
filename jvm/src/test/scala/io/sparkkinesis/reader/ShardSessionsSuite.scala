package io.sparkkinesis.reader

import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.fetching.{BufferedRecord, FetchSettings, FetchedPage, ReadMode, ShardFetcher}
import io.sparkkinesis.offsets.{RecordPosition, ShardKey, ShardPosition, StartPosition}

/**
 * The executor's registry of shard sessions as real-time tasks park their fetchers in it between batches: a fetcher
 * is taken only where it stands, by one task at a time, and closed when it does not fit, when no task took it in time,
 * or when its query stopped. (Its buffers, for micro-batch queries: PrefetcherSuite.)
 */
class ShardSessionsSuite extends AnyFunSuite {

  /** A fetcher that reads nothing: what the pool does with it is all that is looked at. */
  private class Held(ended: Boolean = false, failed: Boolean = false) extends ShardFetcher {
    var closes = 0
    override def fetch(patient: Boolean): FetchedPage = throw new UnsupportedOperationException
    override def shardEnded: Boolean = ended
    override def calls: Long = 0L
    override def throttled: Long = 0L
    override def dataLoss: Long = 0L
    override def broken: Boolean = failed
    override def close(): Unit = closes += 1
  }

  private val settings = FetchSettings(maxRecordsPerCall = 100, minPeriodMillis = 200L)
  private val shard = ShardKey("s", "shardId-000000000000")
  private def after(seq: String): ShardPosition = ShardPosition.After(RecordPosition(seq, 0L, lastInAggregate = true))
  private val leftover =
    Vector(BufferedRecord(RecordPosition("11", 0L, lastInAggregate = true), "k", Array[Byte](1), 5L))

  private final class Clock { var now = 1000L }

  test("a fetcher given back is taken once, where it stands, with the records not handed on; then none is pooled") {
    val pool = new ShardSessions()
    val f = new Held
    pool.give("q", shard, f, after("10"), leftover, settings, closed = false)
    val taken = pool.take("q", shard, after("10"), settings, closed = false)
    assert(taken.map(_.fetcher).contains(f))
    assert(taken.get.leftover == leftover)
    // Taken: a second task of the shard (a speculative one) finds nothing and opens its own.
    assert(pool.take("q", shard, after("10"), settings, closed = false).isEmpty)
    assert(f.closes == 0 && pool.size == 0)
  }

  test("a task starting elsewhere, reading otherwise, or of another query gets nothing; a misfit is closed") {
    val pool = new ShardSessions()
    val f = new Held
    pool.give("q", shard, f, after("10"), Vector.empty, settings, closed = false)
    assert(pool.take("other", shard, after("10"), settings, closed = false).isEmpty)
    assert(pool.take("q", shard.copy(shardId = "shardId-000000000001"), after("10"), settings, false).isEmpty)
    assert(f.closes == 0 && pool.size == 1)
    assert(pool.take("q", shard, after("9"), settings, closed = false).isEmpty)
    assert(f.closes == 1 && pool.size == 0)

    val g = new Held
    pool.give("q", shard, g, ShardPosition.NotStarted(StartPosition.TrimHorizon), Vector.empty, settings, false)
    assert(pool.take("q", shard, ShardPosition.NotStarted(StartPosition.TrimHorizon),
        settings.copy(mode = ReadMode.FanOut(Map("s" -> "arn"))), closed = false).isEmpty)
    assert(g.closes == 1)

    val h = new Held
    pool.give("q", shard, h, after("10"), Vector.empty, settings, closed = false)
    assert(pool.take("q", shard, after("10"), settings, closed = true).isEmpty)
    assert(h.closes == 1 && pool.size == 0)
  }

  test("a fetcher that failed, whose shard ended, or at the shard's end is closed, not pooled") {
    val pool = new ShardSessions()
    val failed = new Held(failed = true)
    val ended = new Held(ended = true)
    val atEnd = new Held
    pool.give("q", shard, failed, after("10"), Vector.empty, settings, closed = false)
    pool.give("q", shard, ended, after("10"), Vector.empty, settings, closed = false)
    pool.give("q", shard, atEnd, ShardPosition.Ended, Vector.empty, settings, closed = false)
    assert(pool.size == 0)
    assert(Seq(failed, ended, atEnd).map(_.closes) == Seq(1, 1, 1))
  }

  test("of two fetchers given back for one shard the older is closed") {
    val pool = new ShardSessions()
    val (older, newer) = (new Held, new Held)
    pool.give("q", shard, older, after("10"), Vector.empty, settings, closed = false)
    pool.give("q", shard, newer, after("12"), Vector.empty, settings, closed = false)
    assert(older.closes == 1 && newer.closes == 0)
    assert(pool.take("q", shard, after("12"), settings, closed = false).map(_.fetcher).contains(newer))
  }

  test("a fetcher no task took within the idle time is closed by the sweep, not before") {
    val clock = new Clock
    val pool = new ShardSessions(parkedIdleMillis = 60000L, clock = () => clock.now)
    val f = new Held
    pool.give("q", shard, f, after("10"), Vector.empty, settings, closed = false)
    clock.now += 60000L
    pool.evictIdle()
    assert(f.closes == 0 && pool.size == 1)
    clock.now += 1L
    pool.evictIdle()
    assert(f.closes == 1 && pool.size == 0)
    assert(pool.take("q", shard, after("10"), settings, closed = false).isEmpty)
  }

  test("a fetcher the sweep is closing is never handed to a task that asks for it meanwhile") {
    val clock = new Clock
    val pool = new ShardSessions(parkedIdleMillis = 60000L, clock = () => clock.now)
    val closing = new java.util.concurrent.CountDownLatch(1)
    val release = new java.util.concurrent.CountDownLatch(1)
    // Its close takes a while (the network, a subscription's cancel): the sweep is inside close() while a task of
    // the shard asks the pool for its fetcher.
    val slow = new Held {
      override def close(): Unit = { closing.countDown(); release.await(); super.close() }
    }
    pool.give("q", shard, slow, after("10"), Vector.empty, settings, closed = false)
    clock.now += 60001L
    val sweep = new Thread(() => pool.evictIdle(), "test-sweep")
    sweep.setDaemon(true)
    sweep.start()
    try {
      assert(closing.await(10, java.util.concurrent.TimeUnit.SECONDS), "the sweep never closed the idle fetcher")
      val taken = pool.take("q", shard, after("10"), settings, closed = false)
      assert(!taken.exists(_.fetcher eq slow), "a task was handed the fetcher the sweep is closing")
    } finally {
      release.countDown()
      sweep.join(10000L)
    }
    assert(!sweep.isAlive && slow.closes == 1 && pool.size == 0)
  }

  test("a stopped query's fetchers are closed, other queries' kept") {
    val pool = new ShardSessions()
    val (mine, theirs) = (new Held, new Held)
    pool.give("stopped", shard, mine, after("10"), Vector.empty, settings, closed = false)
    pool.give("running", shard, theirs, after("10"), Vector.empty, settings, closed = false)
    assert(pool.holds("stopped"))
    pool.retire(Seq("stopped", "gone long ago"))
    assert(!pool.holds("stopped") && pool.holds("running"))
    assert(mine.closes == 1 && theirs.closes == 0)
  }
}
