package io.sparkkinesis.reader

import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.fetching.{BufferedRecord, HeldRecords}
import io.sparkkinesis.offsets.{RecordPosition, ShardPosition, StartPosition}

/**
 * A [[ShardBuffer]]'s records on their own: no fetcher, no server, no Spark. Record n has sequence number n, partition
 * key "k", 10 * n bytes of data (so it weighs 10 * n + 1 against byte budgets) and arrived at 100 * n.
 */
class RecordWindowSuite extends AnyFunSuite {
  private val start = ShardPosition.NotStarted(StartPosition.TrimHorizon)

  private def pos(n: Int): RecordPosition = RecordPosition(n.toString, 0L, lastInAggregate = true)
  private def after(n: Int): ShardPosition = ShardPosition.After(pos(n))
  private def record(n: Int): BufferedRecord = BufferedRecord(pos(n), "k", Array.fill(10 * n)(1.toByte), 100L * n)
  private def weight(ns: Int*): Long = ns.map(n => 10L * n + 1).sum
  private def heap(ns: Int*): Long = ns.map(record(_).heapBytes).sum

  /** A window at trim horizon holding records 1 to 5. */
  private def window(): RecordWindow = {
    val w = new RecordWindow
    w.align(start)
    w.append((1 to 5).iterator.map(record))
    w
  }

  private def positions(rs: Option[IndexedSeq[BufferedRecord]]): Option[Seq[RecordPosition]] = rs.map(_.map(_.position))

  test("a new window has no base and starts over at its first align") {
    val w = new RecordWindow
    assert(!w.hasBase)
    assert(w.slice(start, pos(1)).isEmpty)
    assert(w.align(start), "the first align starts the window")
    assert(w.hasBase && w.base == start && w.last == start && w.isEmpty)
  }

  test("align into the middle drops the records up to the one named, and their bytes") {
    val w = window()
    assert(w.payloadBytes == weight(1, 2, 3, 4, 5) && w.heapBytes == heap(1, 2, 3, 4, 5))
    assert(!w.align(after(2)), "the window reaches after record 2: it need not start over")
    assert(w.base == after(2) && w.size == 3 && w.last == after(5))
    assert(w.payloadBytes == weight(3, 4, 5))
    assert(w.heapBytes == heap(3, 4, 5))
    assert(!w.align(after(2)) && w.size == 3, "aligning where the window starts keeps every record")
  }

  test("align to the window's end empties it without starting over") {
    val w = window()
    assert(!w.align(after(5)))
    assert(w.isEmpty && w.base == after(5) && w.last == after(5))
    assert(w.payloadBytes == 0 && w.heapBytes == 0)
  }

  test("align elsewhere starts over, empty, at the position asked") {
    val beyond = window()
    assert(beyond.align(after(9)), "after a record the window does not hold")
    assert(beyond.isEmpty && beyond.base == after(9) && beyond.payloadBytes == 0 && beyond.heapBytes == 0)

    val behind = window()
    behind.align(after(2))
    assert(behind.align(after(1)), "after a record already dropped")
    assert(behind.isEmpty && behind.base == after(1))

    // Only an `After` names a record held; a start at a held record's sequence number is somewhere else.
    val atSequence = ShardPosition.NotStarted(StartPosition.AtSequence("3"))
    val named = window()
    assert(named.align(atSequence))
    assert(named.isEmpty && named.base == atSequence)
  }

  test("append keeps only records after the window's last one and after each position it is given") {
    val w = window()
    assert(w.append(Iterator(record(4), record(5), record(6))) == weight(6), "4 and 5 are held already")
    assert(w.last == after(6))
    assert(w.append(Iterator(record(8), record(7))) == weight(8), "7 comes before the last record, 8")
    assert(w.append(Iterator(record(9), record(10), record(11)), after(10), start) == weight(11))
    assert(w.size == 8 && w.last == after(11))
    assert(w.payloadBytes == weight(1, 2, 3, 4, 5, 6, 8, 11) && w.heapBytes == heap(1, 2, 3, 4, 5, 6, 8, 11))
  }

  test("append after part of an aggregate takes only its later sub-records") {
    val w = new RecordWindow
    val read = RecordPosition("7", 1L, lastInAggregate = false)
    w.align(ShardPosition.After(read))
    val subs = (0 to 2).map(i => BufferedRecord(RecordPosition("7", i.toLong, i == 2), "k", Array[Byte](1, 2), 0L))
    assert(w.append(subs.iterator) == 3, "only sub-record 2 (2 bytes of data, a 1-byte key)")
    assert(w.size == 1 && w.last == ShardPosition.After(subs(2).position))
  }

  test("a cut takes records from the head up to the record budget and reports what is held beyond") {
    val c = window().cut(start, maxRecords = 2, maxBytes = Long.MaxValue, cutoffMillis = None, shardEnded = false)
    assert(c.aligned && c.records == 2 && c.bytes == weight(1, 2) && c.end == after(2))
    assert(c.beyondRecords == 3 && c.beyondBytes == weight(3, 4, 5))
    assert(c.first.contains(pos(1)))
    assert(c.held.contains(HeldRecords(5L, weight(1, 2, 3, 4, 5), 100L)))
    assert(!c.pastCutoff && !c.takesAll)
  }

  test("a cut takes records up to the byte budget, a budget met exactly included") {
    val w = window()
    val exact = w.cut(start, 100, maxBytes = weight(1, 2, 3), None, shardEnded = false)
    assert(exact.records == 3 && exact.end == after(3) && exact.bytes == weight(1, 2, 3))
    val short = w.cut(start, 100, maxBytes = weight(1, 2, 3) - 1, None, shardEnded = false)
    assert(short.records == 2 && short.end == after(2) && short.beyondBytes == weight(3, 4, 5))
    val all = w.cut(start, 5, Long.MaxValue, None, shardEnded = false)
    assert(all.records == 5 && all.takesAll && all.beyondRecords == 0 && all.beyondBytes == 0)
  }

  test("a first record larger than the byte budget is still taken, alone") {
    val w = window()
    w.align(after(3))
    val c = w.cut(after(3), 100, maxBytes = 1, None, shardEnded = false)
    assert(c.records == 1 && c.bytes == weight(4) && c.end == after(4) && c.first.contains(pos(4)))
    assert(c.beyondRecords == 1 && c.beyondBytes == weight(5))
    val none = w.cut(after(3), maxRecords = 0, Long.MaxValue, None, shardEnded = false)
    assert(none.records == 0 && none.end == after(3) && none.first.isEmpty, "a record budget of 0 takes nothing")
  }

  test("a cut stops before the first record that arrived after the cutoff") {
    val w = window()
    val c = w.cut(start, 100, Long.MaxValue, cutoffMillis = Some(250L), shardEnded = false)
    assert(c.pastCutoff && c.records == 2 && c.end == after(2))
    val onIt = w.cut(start, 100, Long.MaxValue, cutoffMillis = Some(300L), shardEnded = false)
    assert(onIt.records == 3 && onIt.pastCutoff, "a record that arrived at the cutoff is taken")
    val first = w.cut(start, 100, Long.MaxValue, cutoffMillis = Some(50L), shardEnded = false)
    assert(first.pastCutoff && first.records == 0 && first.end == start && first.first.isEmpty)
    val budget = w.cut(start, 1, Long.MaxValue, cutoffMillis = Some(250L), shardEnded = false)
    assert(budget.records == 1 && !budget.pastCutoff, "the budget stopped the cut before the cutoff was met")
    val both = w.cut(start, 2, Long.MaxValue, cutoffMillis = Some(250L), shardEnded = false)
    assert(both.records == 2 && both.pastCutoff, "the record after a full budget is past the cutoff: the cut says so")
  }

  test("a cut from where the window does not start takes nothing and reports nothing held") {
    val c = window().cut(after(2), 100, Long.MaxValue, None, shardEnded = true)
    assert(!c.aligned && c.records == 0 && c.bytes == 0 && c.end == after(2))
    assert(c.beyondRecords == 0 && c.beyondBytes == 0 && c.held.isEmpty && c.first.isEmpty && !c.takesAll)
  }

  test("only an aligned, empty window over an ended shard ends the shard") {
    val empty = window()
    empty.align(after(5))
    assert(empty.cut(after(5), 100, Long.MaxValue, None, shardEnded = true).end == ShardPosition.Ended)
    assert(empty.cut(after(5), 100, Long.MaxValue, None, shardEnded = false).end == after(5))
    val held = window().cut(start, 100, Long.MaxValue, None, shardEnded = true)
    assert(held.end == after(5), "the records held are planned first")
    assert(empty.cut(after(4), 100, Long.MaxValue, None, shardEnded = true).end == after(4))
  }

  test("slice copies a range that starts at the base or at a record held and ends at a record held") {
    val w = window()
    assert(positions(w.slice(start, pos(3))).contains(Seq(pos(1), pos(2), pos(3))))
    assert(positions(w.slice(after(1), pos(4))).contains(Seq(pos(2), pos(3), pos(4))))
    assert(positions(w.slice(after(4), pos(5))).contains(Seq(pos(5))))
  }

  test("slice of a range the window does not hold all of is None") {
    val w = window()
    assert(w.slice(start, pos(6)).isEmpty, "ends after the last record")
    assert(w.slice(after(0), pos(3)).isEmpty, "starts after a record not held")
    w.align(after(2))
    assert(w.slice(start, pos(3)).isEmpty, "starts where the window no longer does")
    assert(w.slice(after(1), pos(3)).isEmpty, "starts after a record dropped")
    assert(positions(w.slice(after(2), pos(3))).contains(Seq(pos(3))))
  }

  test("dropAll empties the window and its byte counts and keeps its base") {
    val w = window()
    w.align(after(1))
    w.dropAll()
    assert(w.isEmpty && w.payloadBytes == 0 && w.heapBytes == 0 && w.base == after(1) && w.last == after(1))
    assert(w.append(Iterator(record(1), record(2))) == weight(2))
    assert(w.payloadBytes == weight(2) && w.heapBytes == heap(2))
  }
}
