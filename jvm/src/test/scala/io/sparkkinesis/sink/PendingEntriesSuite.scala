package io.sparkkinesis.sink

import org.scalatest.funsuite.AnyFunSuite

class PendingEntriesSuite extends AnyFunSuite {

  private def entry(key: String, n: Int, bytes: Int = 10): PutEntry =
    new PutEntry(0, key, null, Array.fill(bytes - key.length)(0.toByte), bytes, key, 1, s"$key:$n")

  private def names(batch: Seq[PutEntry]): Seq[String] = batch.map(_.position)

  test("unordered: records leave in arrival order within the record and byte limits") {
    val p = new UnorderedEntries
    (0 until 7).foreach(i => p.add(entry("k", i)))
    assert(p.readyCount == 7 && p.readyBytes == 70 && p.waitingCount == 7)
    assert(names(p.take(3, 1000)) == Seq("k:0", "k:1", "k:2"))
    assert(names(p.take(10, 25)) == Seq("k:3", "k:4"))
    assert(p.waitingCount == 2 && p.waitingBytes == 20)
  }

  test("unordered: a retry waits for its time, then leaves ahead of newer records") {
    val p = new UnorderedEntries
    p.add(entry("k", 0))
    val first = p.take(10, 1000).head
    p.add(entry("k", 1))
    first.notBeforeNanos = 1000
    p.retry(first)
    p.promoteDue(999)
    assert(p.readyCount == 1 && p.waitingCount == 2 && p.nextDueNanos.contains(1000L))
    p.promoteDue(1000)
    assert(names(p.take(10, 1000)) == Seq("k:0", "k:1"))
  }

  test("a record alone in a call may exceed the byte limit (the writer checks record sizes)") {
    val p = new UnorderedEntries
    p.add(entry("k", 0, bytes = 50))
    assert(names(p.take(10, 20)) == Seq("k:0"))
  }

  test("perKey: one record per key per call, and none while the key's previous record is out") {
    val p = new PerKeyEntries
    Seq("a" -> 0, "a" -> 1, "b" -> 0, "a" -> 2, "b" -> 1, "c" -> 0).foreach { case (k, n) => p.add(entry(k, n)) }
    assert(p.readyCount == 3)
    val first = p.take(10, 1000)
    assert(names(first) == Seq("a:0", "b:0", "c:0"))
    assert(p.readyCount == 0 && p.take(10, 1000).isEmpty)
    p.landed(first(1)) // b:0 landed
    assert(names(p.take(10, 1000)) == Seq("b:1"))
    // a:0 failed: it comes back before a:1, only once its retry time has come.
    first.head.notBeforeNanos = 500
    p.retry(first.head)
    p.landed(first(2))
    p.promoteDue(499)
    assert(p.take(10, 1000).isEmpty)
    p.promoteDue(500)
    val retried = p.take(10, 1000)
    assert(names(retried) == Seq("a:0"))
    p.landed(retried.head)
    assert(names(p.take(10, 1000)) == Seq("a:1"))
    assert(p.waitingCount == 1 && p.waitingBytes == 10)
  }

  test("retry timer hands items back earliest first") {
    val t = new RetryTimer[String]
    t.schedule(30, "c"); t.schedule(10, "a"); t.schedule(20, "b"); t.schedule(10, "a2")
    assert(t.next.contains(10L))
    assert(t.due(20) == Seq("a", "a2", "b"))
    assert(t.size == 1 && t.due(29).isEmpty)
  }
}
