package io.sparkkinesis.reader

import java.util.concurrent.{CountDownLatch, TimeUnit}

import org.scalatest.funsuite.AnyFunSuite

/** The threads a prefetch task reads its shards on: side by side, results in order, failures passed on. */
class FetchThreadsSuite extends AnyFunSuite {

  test("a task's shards are read side by side: each waits for all the others to have started") {
    val shards = 12 // under the pool's size: every shard gets a thread at once
    val started = new CountDownLatch(shards)
    val results = FetchThreads.map(0 until shards) { i =>
      started.countDown()
      // Read one after the other, the first would wait here alone and give up after 30 s.
      val together = started.await(30, TimeUnit.SECONDS)
      (i, together, Thread.currentThread().getName)
    }
    assert(results.map(_._1) == (0 until shards), "results come in the shards' order")
    assert(results.forall(_._2), s"not all shards were read at once: $results")
    assert(results.forall(_._3.startsWith("kinesis-prefetch-")))
  }

  test("one shard is read on the task's own thread; a shard's failure is the task's failure") {
    val caller = Thread.currentThread().getName
    assert(FetchThreads.map(Seq(1))(_ => Thread.currentThread().getName) == Seq(caller))
    val e = intercept[IllegalStateException] {
      FetchThreads.map(1 to 4)(i => if (i == 3) throw new IllegalStateException(s"shard $i failed") else i)
    }
    assert(e.getMessage == "shard 3 failed")
  }
}
