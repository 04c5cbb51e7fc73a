package io.sparkkinesis.reader

import java.util.concurrent.{Callable, ExecutorService, Executors}

import io.sparkkinesis.runtime.DaemonThreads
import io.sparkkinesis.compat.CollectionConverters._

/**
 * The executor's threads for the shards of a prefetch task. A task takes many shards (as many as it takes for a
 * round to have no more tasks than Spark has slots), and each shard's read waits on the network: read one after
 * the other, a task of 100 shards would wait for 100 calls in a row. The shards of a task are read side by side
 * instead, on a pool shared by every task of the JVM (so threads do not grow with tasks), each shard by one thread
 * at a time. Interrupting the task (Spark cancelling it) cancels and interrupts its shards' reads.
 */
private[sparkkinesis] object FetchThreads {

  /** Threads of the JVM-wide pool: calls in flight at once per executor, whatever the tasks. */
  val Size = 16

  private lazy val pool: ExecutorService =
    Executors.newFixedThreadPool(Size, DaemonThreads.factory("kinesis-prefetch", numbered = true))

  /** `work` applied to every item, side by side on the pool (inline for one), results in the items' order. */
  def map[A, B](items: Seq[A])(work: A => B): Seq[B] =
    if (items.size <= 1) items.map(work)
    else {
      val calls = items.map(item => new Callable[B] { def call(): B = work(item) })
      pool.invokeAll(calls.asJava).asScala.toSeq.map { f =>
        try f.get()
        catch { case e: java.util.concurrent.ExecutionException if e.getCause != null => throw e.getCause }
      }
    }
}
