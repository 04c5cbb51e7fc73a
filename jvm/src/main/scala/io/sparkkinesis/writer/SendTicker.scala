package io.sparkkinesis.writer

import java.util.concurrent.{
  RejectedExecutionException,
  ScheduledFuture,
  ScheduledThreadPoolExecutor,
  SynchronousQueue,
  ThreadPoolExecutor,
  TimeUnit
}

import io.sparkkinesis.runtime.DaemonThreads

/**
 * Wakes writers with a `maxRecordDelay`, so the records they hold leave within that delay even when no new row comes
 * to send them. One daemon thread per JVM keeps time and only dispatches: each writer's tick runs on a thread of a
 * shared pool, at most one tick per writer at a time (a tick that comes while the writer's previous one still runs is
 * skipped). A tick that blocks (a credentials refresh, a slow endpoint) thus holds one pool thread and delays only
 * its own writer; the pool has as many threads as writers have ticks running at once (at most the tasks of the
 * executor), and its idle threads end after a minute.
 */
private[sparkkinesis] object SendTicker {
  private lazy val timer: ScheduledThreadPoolExecutor = {
    val t = new ScheduledThreadPoolExecutor(1, DaemonThreads.factory("spark-kinesis-send-ticker"))
    t.setRemoveOnCancelPolicy(true)
    t
  }

  private lazy val runners: ThreadPoolExecutor =
    new ThreadPoolExecutor(0, Int.MaxValue, 60L, TimeUnit.SECONDS, new SynchronousQueue[Runnable](),
      DaemonThreads.factory("spark-kinesis-send-tick", numbered = true))

  /** Runs `tick` every `periodMillis` until [[Ticks.stop]]. */
  def every(periodMillis: Long)(tick: () => Unit): Ticks = new Ticks(periodMillis, tick)

  /**
   * One writer's ticks. [[stop]] ends them for good: once it returns, no tick of the writer runs or starts, so
   * nothing a tick would send leaves after it.
   */
  final class Ticks private[SendTicker] (periodMillis: Long, tick: () => Unit) {
    // Guarded by this: a tick dispatched and not finished; no tick may start any more.
    private var running = false
    private var stopped = false

    private val schedule: ScheduledFuture[_] =
      timer.scheduleWithFixedDelay(() => dispatch(), periodMillis, periodMillis, TimeUnit.MILLISECONDS)

    /** On the timer's thread: hands the tick to a pool thread unless the last one still runs; never blocks. */
    private def dispatch(): Unit = {
      val start = synchronized {
        val go = !stopped && !running
        if (go) running = true
        go
      }
      if (start)
        try runners.execute(() => run())
        catch { case _: RejectedExecutionException => finished() }
    }

    private def run(): Unit =
      try if (!synchronized(stopped)) tick()
      finally finished()

    private def finished(): Unit = synchronized {
      running = false
      notifyAll()
    }

    /**
     * No tick starts any more, and a tick under way finishes (its calls leave) before this returns. Waits even when
     * interrupted (the task may be being killed), and keeps the interrupt.
     */
    def stop(): Unit = {
      schedule.cancel(false)
      var interrupted = false
      synchronized {
        stopped = true
        while (running)
          try wait()
          catch { case _: InterruptedException => interrupted = true }
      }
      if (interrupted) Thread.currentThread().interrupt()
    }
  }
}
