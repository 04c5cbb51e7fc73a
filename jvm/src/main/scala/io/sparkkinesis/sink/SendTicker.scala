package io.sparkkinesis.sink

import java.util.concurrent.{ScheduledFuture, ScheduledThreadPoolExecutor, ThreadFactory, TimeUnit}

/**
 * One daemon thread per JVM that wakes writers with a `maxRecordDelay`, so the records they hold leave within that
 * delay even when no new row comes to send them. A tick must not block: it only sends what the writer can send at
 * once, and skips a writer whose task is busy with it.
 */
private[sparkkinesis] object SendTicker {
  private lazy val timer: ScheduledThreadPoolExecutor = {
    val t = new ScheduledThreadPoolExecutor(1,
      new ThreadFactory {
        override def newThread(r: Runnable): Thread = {
          val thread = new Thread(r, "spark-kinesis-send-ticker")
          thread.setDaemon(true)
          thread
        }
      })
    t.setRemoveOnCancelPolicy(true)
    t
  }

  /** Runs `tick` every `periodMillis` until the returned future is cancelled. */
  def every(periodMillis: Long)(tick: () => Unit): ScheduledFuture[_] =
    timer.scheduleWithFixedDelay(() => tick(), periodMillis, periodMillis, TimeUnit.MILLISECONDS)
}
