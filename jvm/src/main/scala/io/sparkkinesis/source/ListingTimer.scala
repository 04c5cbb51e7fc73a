package io.sparkkinesis.source

import java.util.concurrent.{ScheduledFuture, ScheduledThreadPoolExecutor, TimeUnit}

import io.sparkkinesis.runtime.DaemonThreads

/**
 * The driver's one thread for shard listings taken ahead of need ([[ShardTracker.listAhead]]), shared by every
 * query of the application: a listing is a few ListShards calls, so one thread keeps up with many queries.
 */
private[source] object ListingTimer {
  private lazy val timer = {
    val t = new ScheduledThreadPoolExecutor(1, DaemonThreads.factory("kinesis-shard-listing"))
    t.setRemoveOnCancelPolicy(true)
    t
  }

  /** Runs `task` now and then every `periodMillis`, until the returned future is cancelled. */
  def every(periodMillis: Long)(task: () => Unit): ScheduledFuture[_] =
    timer.scheduleWithFixedDelay(() => task(), 0L, math.max(1L, periodMillis), TimeUnit.MILLISECONDS)
}
