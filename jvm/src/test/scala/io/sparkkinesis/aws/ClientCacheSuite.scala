package io.sparkkinesis.aws

import java.util.concurrent.atomic.AtomicInteger

import org.scalatest.funsuite.AnyFunSuite

/** The bounded client cache, with stand-in clients that count their closes. */
class ClientCacheSuite extends AnyFunSuite {

  private final class Fake(val key: String) extends AutoCloseable {
    val closed = new AtomicInteger()
    override def close(): Unit = closed.incrementAndGet()
  }

  private def cache(capacity: Int, built: collection.mutable.Buffer[Fake], extras: collection.mutable.Buffer[Fake]) =
    new ClientCache[String, Fake](capacity, closeDelayMillis = 0L,
      k => {
        val c = new Fake(k)
        val extra = new Fake(k + "-credentials")
        built += c
        extras += extra
        ClientCache.Built(c, Seq(extra))
      })

  test("one client per key; past the capacity the least recently used one is closed, with what was built for it") {
    val built = collection.mutable.Buffer.empty[Fake]
    val extras = collection.mutable.Buffer.empty[Fake]
    val clients = cache(capacity = 2, built, extras)
    val a = clients("a")
    assert(clients("a") eq a)
    val b = clients("b")
    clients("a") // a is now more recent than b
    clients("c")
    assert(b.closed.get == 1 && extras(1).closed.get == 1, "b was the least recently used")
    assert(a.closed.get == 0 && clients.size == 2)
    val b2 = clients("b")
    assert(!(b2 eq b), "a key asked for again gets a new client")
    assert(built.map(_.key) == Seq("a", "b", "c", "b"))
  }

  test("however many keys come and go, the cache holds at most its capacity and closes every client it let go") {
    val built = collection.mutable.Buffer.empty[Fake]
    val clients = cache(capacity = 4, built, collection.mutable.Buffer.empty)
    (0 until 50).foreach(i => clients(s"key-$i"))
    assert(clients.size == 4)
    assert(built.count(_.closed.get == 1) == 46 && built.forall(_.closed.get <= 1))
    assert(built.takeRight(4).forall(_.closed.get == 0))
  }

  test("a retired client is closed and rebuilt on the next request; closeAll closes the rest") {
    val built = collection.mutable.Buffer.empty[Fake]
    val clients = cache(capacity = 4, built, collection.mutable.Buffer.empty)
    val a = clients("a")
    clients("b")
    clients.retire("a")
    assert(a.closed.get == 1 && clients.size == 1)
    assert(!(clients("a") eq a))
    clients.closeAll()
    assert(built.forall(_.closed.get == 1) && clients.size == 0)
  }
}
