package io.sparkkinesis.writer

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

  test("addFirst: records sent again go ahead of their key's waiting records, after the one in flight") {
    val p = new PerKeyEntries
    Seq("a" -> 0, "a" -> 3, "b" -> 0, "b" -> 1).foreach { case (k, n) => p.add(entry(k, n)) }
    val out = p.take(1, 1000) // a:0 in flight; b ready
    assert(names(out) == Seq("a:0"))
    p.addFirst(Seq(entry("a", 1), entry("a", 2))) // a busy: they wait for a:0 to land
    p.addFirst(Seq(entry("b", 9, bytes = 30))) // b ready: it has a new first record
    p.addFirst(Seq(entry("c", 0))) // c idle: it becomes ready
    assert(p.readyCount == 2 && p.readyBytes == 40)
    assert(p.waitingCount == 7 && p.waitingBytes == 90)
    p.landed(out.head)
    val order = Iterator.continually(p.take(10, 1000)).takeWhile(_.nonEmpty).map { batch =>
      batch.foreach(p.landed)
      names(batch)
    }.toVector
    assert(order.map(_.filter(_.startsWith("a"))).flatten == Seq("a:1", "a:2", "a:3"))
    assert(order.map(_.filter(_.startsWith("b"))).flatten == Seq("b:9", "b:0", "b:1"))
    assert(p.waitingCount == 0 && p.waitingBytes == 0 && p.readyBytes == 0)
  }

  test("unordered addFirst: the records leave next, in their order") {
    val p = new UnorderedEntries
    p.add(entry("k", 2))
    p.addFirst(Seq(entry("k", 0), entry("k", 1)))
    assert(p.readyBytes == 30 && p.waitingCount == 3)
    assert(names(p.take(10, 1000)) == Seq("k:0", "k:1", "k:2"))
  }

  test("retry timer hands items back earliest first") {
    val t = new RetryTimer[String]
    t.schedule(30, "c"); t.schedule(10, "a"); t.schedule(20, "b"); t.schedule(10, "a2")
    assert(t.next.contains(10L))
    assert(t.due(20) == Seq("a", "a2", "b"))
    assert(t.size == 1 && t.due(29).isEmpty)
  }
}
