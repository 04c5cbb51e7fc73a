package io.sparkkinesis.offsets

import org.scalatest.funsuite.AnyFunSuite

class ShardPositionSuite extends AnyFunSuite {
  private def pos(seq: Long, sub: Long = 0, last: Boolean = true) = RecordPosition(seq.toString, sub, last)

  test("records after a position are included, sub-records of an aggregate included one by one") {
    val after = ShardPosition.After(pos(100, 2, last = false))
    assert(!ShardPosition.includes(after, pos(100, 2, last = false)))
    assert(!ShardPosition.includes(after, pos(100, 1, last = false)))
    assert(ShardPosition.includes(after, pos(100, 3)))
    assert(ShardPosition.includes(after, pos(101)))
    assert(!ShardPosition.includes(after, pos(99)))
  }

  test("sequence numbers compare as numbers, not strings") {
    assert(pos(1000).isAfter(pos(999)))
    assert(RecordPosition("49590338271490256608559692538361571095921575989136588899", 0, true)
        .isAfter(RecordPosition("9590338271490256608559692538361571095921575989136588898", 0, true)))
  }

  test(
    "resuming after a complete record skips it; inside an aggregate it re-reads the aggregate and skips what was read") {
    assert(ShardPosition.resumeFrom(ShardPosition.After(pos(7))) == (StartPosition.AfterSequence("7"), None))
    val inside = pos(7, 4, last = false)
    assert(ShardPosition.resumeFrom(ShardPosition.After(inside)) == (StartPosition.AtSequence("7"), Some(inside)))
    assert(ShardPosition.resumeFrom(ShardPosition.NotStarted(StartPosition.TrimHorizon)) == (StartPosition.TrimHorizon,
      None))
  }

  test("not-started positions include everything from their start") {
    assert(ShardPosition.includes(ShardPosition.NotStarted(StartPosition.TrimHorizon), pos(1)))
    assert(ShardPosition.includes(ShardPosition.NotStarted(StartPosition.AtSequence("5")), pos(5)))
    assert(!ShardPosition.includes(ShardPosition.NotStarted(StartPosition.AfterSequence("5")), pos(5)))
    assert(!ShardPosition.includes(ShardPosition.Ended, pos(5)))
  }
}
