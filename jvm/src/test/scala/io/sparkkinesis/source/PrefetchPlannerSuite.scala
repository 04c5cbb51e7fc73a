package io.sparkkinesis.source

import io.sparkkinesis.compat.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.offsets.{KinesisSourceOffset, RecordPosition, ShardKey, ShardPosition, StartPosition}
import io.sparkkinesis.fetching.{FetchCounts, ShardReading}
import io.sparkkinesis.reader.ShardCut

/** Driver-side planning of prefetch rounds, without Spark or a server: budgets, due shards, tasks, AvailableNow. */
class PrefetchPlannerSuite extends AnyFunSuite {

  private def options(extra: (String, String)*): SourceOptions = SourceOptions.parse((Map(
      "streamName" -> "orders", "region" -> "us-east-1", "endpointUrl" -> "http://127.0.0.1:1") ++ extra).asJava)

  private def key(i: Int) = ShardKey("orders", f"shardId-$i%012d")
  private def after(seq: Int) = ShardPosition.After(RecordPosition(seq.toString, 0L, lastInAggregate = true))
  private val notStarted: ShardPosition = ShardPosition.NotStarted(StartPosition.TrimHorizon)
  private def offset(shards: (ShardKey, ShardPosition)*) = KinesisSourceOffset(shards.toMap)

  private def report(
      k: ShardKey,
      end: ShardPosition,
      nextDue: Long = 0L,
      buffered: Long = 0L,
      caughtUp: Boolean = false,
      pastCutoff: Boolean = false,
      location: String = "executor_h_1",
      bytes: Long = 0L,
      ended: Boolean = false) =
    ShardCut(end, records = 0L, bytes = bytes, caughtUp = caughtUp, shardEnded = ended, pastCutoff = pastCutoff,
      nextDueMillis = nextDue,
      reading = ShardReading(k, None, FetchCounts.Zero, location, bufferedRecords = buffered))

  test("a budget is shared so that the parts add up to it exactly, the remainder rotating from round to round") {
    for (total <- Seq(0L, 1L, 7L, 10L, 1000L); n <- 1 to 7; round <- 0L to 8L)
      assert(TriggerBudget.split(Some(total), n, round).sum == total)
    assert(TriggerBudget.split(Some(10L), 3, 0) == Seq(4, 3, 3))
    assert(TriggerBudget.split(Some(10L), 3, 1) == Seq(3, 4, 3))
    assert(TriggerBudget.split(Some(10L), 3, 2) == Seq(3, 3, 4))
    assert(TriggerBudget.split(None, 2, 5) == Seq(Long.MaxValue, Long.MaxValue))
  }

  test("a round's tasks carry the trigger's budget shared by the due shards, and rotate the remainder") {
    val planner = new PrefetchPlanner("q", options("shardsPerTask" -> "1"))
    val from = offset(key(0) -> notStarted, key(1) -> notStarted, key(2) -> notStarted)
    val due = Seq(key(0), key(1), key(2))
    val first = planner.plan(from, due, maxRecords = Some(100), maxBytes = Some(10))
    assert(first.size == 3 && first.forall(_.shards.size == 1))
    assert(first.flatMap(_.shards).map(_.maxRecords).sum == 100)
    assert(first.flatMap(_.shards).map(_.maxBytes).sum == 10)
    val second = planner.plan(from, due, maxRecords = Some(100), maxBytes = None)
    assert(
      second.flatMap(_.shards).map(r => r.key -> r.maxRecords).toMap !=
        first.flatMap(_.shards).map(r => r.key -> r.maxRecords).toMap, "the remainder should move to another shard")
    assert(second.flatMap(_.shards).forall(_.maxBytes == Long.MaxValue))
    assert(first.flatMap(_.shards).forall(r => r.from == notStarted))
  }

  test("the query's first round is its opening round (one short page per shard); rounds after a report are not") {
    val planner = new PrefetchPlanner("q", options("shardsPerTask" -> "1"))
    val from = offset(key(0) -> notStarted, key(1) -> notStarted)
    val opening = planner.plan(from, Seq(key(0), key(1)), maxRecords = None, maxBytes = None)
    assert(opening.nonEmpty && opening.forall(_.opening))
    planner.absorb(from, Seq(report(key(0), after(5)), report(key(1), after(7))))
    assert(planner.plan(from, Seq(key(0), key(1)), maxRecords = None, maxBytes = None).forall(!_.opening))
  }

  test("shards are grouped shardsPerTask to a task, and a task goes where its shards' buffers were reported") {
    val planner = new PrefetchPlanner("q", options("shardsPerTask" -> "2"))
    val from = offset((0 until 4).map(i => key(i) -> notStarted): _*)
    planner.absorb(from,
      Seq(report(key(0), notStarted, location = "executor_a_1"),
        report(key(1), notStarted, location = "executor_b_2"), report(key(2), notStarted, location = "executor_a_1"),
        report(key(3), notStarted, location = "executor_b_2")))
    val tasks = planner.plan(from, (0 until 4).map(key), None, None)
    assert(tasks.map(t => t.location -> t.shards.map(_.key).toSet).toSet ==
      Set(Some("executor_a_1") -> Set(key(0), key(2)), Some("executor_b_2") -> Set(key(1), key(3))))
    assert(planner.location(key(3)).contains("executor_b_2"))
    assert(planner.location(key(9)).isEmpty)
  }

  test("a round over many shards has about as many tasks as Spark has slots, each on one executor's buffers") {
    val from = offset((0 until 1000).map(i => key(i) -> notStarted): _*)
    val due = (0 until 1000).map(key)
    // Not reported yet: 1,000 shards on 2 slots make 2 tasks of 500, whatever shardsPerTask says below that.
    val fresh = new PrefetchPlanner("q", options("shardsPerTask" -> "1"), slots = () => 2)
    val first = fresh.plan(from, due, None, None)
    assert(first.map(_.shards.size) == Seq(500, 500))
    assert(first.flatMap(_.shards.map(_.key)).sorted == due)
    // Reported by three executors and run on 6 slots: at most one task more per executor than the slots, no task
    // mixing executors, and a shardsPerTask above what the slots need is kept.
    val placed = new PrefetchPlanner("q", options("shardsPerTask" -> "1"), slots = () => 6)
    placed.absorb(from,
      due.map(k => report(k, notStarted, location = s"executor_h_${k.shardId.takeRight(3).toInt % 3}")))
    val tasks = placed.plan(from, due, None, None)
    assert(tasks.size <= 6 + 3, tasks.map(_.shards.size))
    assert(tasks.forall(t => t.shards.map(r => placed.location(r.key)).distinct == Seq(t.location)))
    assert(tasks.flatMap(_.shards.map(_.key)).sorted == due)
    val big = new PrefetchPlanner("q", options("shardsPerTask" -> "400"), slots = () => 6)
    assert(big.plan(from, due, None, None).map(_.shards.size) == Seq(400, 400, 200))
  }

  test("a shard that left the offset is forgotten: no location, no executor of its own to release") {
    val planner = new PrefetchPlanner("q", options())
    val from = offset(key(0) -> after(1), key(1) -> after(1))
    planner.absorb(from,
      Seq(report(key(0), after(2), location = "executor_h_1"),
        report(key(1), after(2), location = "executor_h_2")))
    assert(planner.locations == Seq("executor_h_1", "executor_h_2"))
    planner.forget(Set(key(0)))
    assert(planner.location(key(0)).isEmpty && planner.location(key(1)).contains("executor_h_2"))
    assert(planner.locations == Seq("executor_h_2"))
  }

  test("a shard is due when never read, when its next call is due, or when it has more than the planned end") {
    val planner = new PrefetchPlanner("q", options())
    val start = offset(key(0) -> after(5), key(1) -> after(5), key(2) -> after(5), key(3) -> after(5))
    planner.absorb(start,
      Seq(
        report(key(0), after(5), nextDue = 1000L),
        report(key(1), after(5), nextDue = 1000L, buffered = 3),
        report(key(2), after(5), nextDue = 500L)))
    val readable = (0 until 4).map(key)
    assert(planner.dueShards(start, readable, nowMillis = 600L) == Seq(key(1), key(2), key(3)))
    assert(planner.dueShards(start, readable, nowMillis = 1000L) == readable)
    // A report that reached further than the offset (its end was not taken) keeps the shard due.
    planner.absorb(start, Seq(report(key(0), after(9), nextDue = 1000L)))
    assert(planner.dueShards(start, readable, nowMillis = 0L).contains(key(0)))
  }

  test("a round's reports move each shard's end, and leave the others where they were") {
    val planner = new PrefetchPlanner("q", options())
    val from = offset(key(0) -> after(5), key(1) -> notStarted)
    val next = planner.absorb(from, Seq(report(key(0), after(9)), report(key(1), notStarted)))
    assert(next == offset(key(0) -> after(9), key(1) -> notStarted))
    assert(planner.absorb(from, Nil) eq from)
  }

  test("without AvailableNow 'nothing new' is always an answer; with it, only once every shard reached the cutoff") {
    val planner = new PrefetchPlanner("q", options())
    val at = offset(key(0) -> after(5), key(1) -> after(7))
    val readable = Seq(key(0), key(1))
    assert(planner.mayAnswerNothingNew(at, readable))
    planner.startAvailableNow(nowMillis = 100L)
    assert(!planner.mayAnswerNothingNew(at, readable), "no report yet: nothing is known of the shards")
    planner.absorb(at,
      Seq(report(key(0), after(5), pastCutoff = true),
        report(key(1), after(7), caughtUp = true,
          buffered = 2)))
    assert(!planner.mayAnswerNothingNew(at, readable), "shard 1 still buffers records that may be before the cutoff")
    assert(planner.dueShards(at, readable, nowMillis = 0L) == Seq(key(1)), "a finished shard is not visited again")
    planner.absorb(at, Seq(report(key(1), after(7), caughtUp = true)))
    assert(planner.mayAnswerNothingNew(at, readable))
    assert(planner.dueShards(at, readable, nowMillis = 0L).isEmpty)
    // A closed shard (listed so, or read to its end) is finished only once its end is planned as Ended.
    val closed = AvailableNowCutoff(100L)
    assert(!closed.finished(after(7), Some(report(key(1), after(7), caughtUp = true, ended = true)), closed = false))
    assert(!closed.finished(after(7), Some(report(key(1), after(7), caughtUp = true)), closed = true))
    assert(closed.finished(after(7), Some(report(key(1), after(7), pastCutoff = true, ended = true)), closed = true))
    val listedClosed = new PrefetchPlanner("q", options(), isClosed = _ == key(1))
    listedClosed.startAvailableNow(nowMillis = 100L)
    listedClosed.absorb(at, Seq(report(key(0), after(5), caughtUp = true), report(key(1), after(7), caughtUp = true)))
    assert(!listedClosed.mayAnswerNothingNew(at, readable))
    assert(listedClosed.dueShards(at, readable, nowMillis = 0L) == Seq(key(1)))
    // A report whose end the offset has not taken yet is not finished.
    assert(!AvailableNowCutoff(100L).finished(after(5), Some(report(key(0), after(6), pastCutoff = true)),
        closed = false))
    val tasks = planner.plan(at, readable, None, None)
    assert(tasks.forall(_.cutoffMillis.contains(100L)))
  }

  test("the pause before the next look is the time until the first shard is due, from 10 ms to 1 s") {
    val planner = new PrefetchPlanner("q", options())
    val at = offset(key(0) -> after(5), key(1) -> after(5))
    assert(planner.pauseMillis(Seq(key(0)), nowMillis = 0L) == 10L)
    planner.absorb(at, Seq(report(key(0), after(5), nextDue = 400L), report(key(1), after(5), nextDue = 5000L)))
    assert(planner.pauseMillis(Seq(key(0), key(1)), nowMillis = 100L) == 300L)
    assert(planner.pauseMillis(Seq(key(1)), nowMillis = 100L) == 1000L)
    assert(planner.pauseMillis(Seq(key(0)), nowMillis = 600L) == 10L)
  }

  test("a weighted budget follows what each shard has waiting, adds up exactly, and leaves no shard at nothing") {
    val weights = IndexedSeq(50000L) ++ IndexedSeq.fill(19)(0L)
    for (round <- 0L to 25L) {
      val parts = TriggerBudget.split(Some(10000L), weights, round)
      assert(parts.sum == 10000L)
      assert(parts.head >= 9900L, parts)
    }
    assert(TriggerBudget.split(Some(7L), IndexedSeq(1L, 1L, 1L), 0L) == TriggerBudget.split(Some(7L), 3, 0L))
    assert(TriggerBudget.split(Some(100L), IndexedSeq(3L, 1L), 0L) == Seq(75L, 25L))
    assert(TriggerBudget.split(Some(Long.MaxValue), IndexedSeq(Long.MaxValue, 1L), 0L).sum == Long.MaxValue)
    assert(TriggerBudget.split(None, IndexedSeq(5L, 0L), 0L) == Seq(Long.MaxValue, Long.MaxValue))
  }

  test("once reported, a shard with a backlog gets nearly all of the trigger's budget, idle shards a little") {
    val planner = new PrefetchPlanner("q", options("shardsPerTask" -> "1"))
    val keys = (0 until 20).map(key)
    val at = offset(keys.map(k => k -> after(5)): _*)
    planner.absorb(at,
      report(key(0), after(5), buffered = 40000) +: keys.tail.map(k =>
        report(k, after(5),
          caughtUp = true)))
    val budgets = planner.plan(at, keys, Some(10000L), None).flatMap(_.shards).map(r => r.key -> r.maxRecords).toMap
    assert(budgets.values.sum == 10000L)
    assert(budgets(key(0)) >= 9000L, budgets)
  }

  test("a round that left budget unused while a shard had more buffered is topped up from the same start") {
    val planner = new PrefetchPlanner("q", options("shardsPerTask" -> "1"))
    val keys = (0 until 20).map(key)
    val from = offset(keys.map(k => k -> notStarted): _*)
    // First round of a backlog: equal shares of 500; shard 0 took 500 and has 9,500 more buffered.
    val fresh = ShardCut(after(500), records = 500L, bytes = 5000L, caughtUp = false, shardEnded = false,
      pastCutoff = false, nextDueMillis = 0L,
      reading = ShardReading(key(0), None, FetchCounts(calls = 1L),
        "executor_h_1", bufferedRecords = 9500L, bufferedBytes = 95000L)) +:
      keys.tail.map(k => report(k, notStarted, caughtUp = true))
    val tasks = planner.topUp(from, fresh, Some(10000L), None).getOrElse(fail("no top-up"))
    val requests = tasks.flatMap(_.shards)
    assert(requests.map(_.key) == Seq(key(0)))
    assert(requests.head.from == notStarted, "the top-up cuts again from the batch's start")
    assert(requests.head.maxRecords == 10000L && requests.head.maxBytes == Long.MaxValue)
    // Nothing to top up: no limit, the budget was used, or nothing is buffered beyond the cuts.
    assert(planner.topUp(from, fresh, None, None).isEmpty)
    assert(planner.topUp(from, fresh, Some(500L), None).isEmpty)
    assert(planner.topUp(from, keys.map(k => report(k, notStarted, caughtUp = true)), Some(10000L), None).isEmpty)
    // Nor a shard cut at the AvailableNow cutoff: what it buffers beyond is not for this query.
    assert(planner.topUp(from, Seq(report(key(0), after(5), buffered = 100, pastCutoff = true)), Some(10000L), None)
        .isEmpty)
  }
}
