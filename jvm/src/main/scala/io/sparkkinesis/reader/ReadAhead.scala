package io.sparkkinesis.reader

import java.util.concurrent.{Executors, ScheduledExecutorService, TimeUnit}

import scala.util.control.NonFatal

import org.apache.spark.internal.Logging

import io.sparkkinesis.runtime.DaemonThreads

/**
 * Executor-side reading between prefetch rounds. After a round has cut a batch's end, a shard that is behind keeps
 * being read in the background, within the same per-shard budget (calls `minFetchPeriod` apart, `maxFetchRate`)
 * and the executor's `fetchBufferSize`, while Spark runs the batch and writes its logs. The next round then finds
 * the records already buffered, so reading overlaps processing instead of alternating with it.
 *
 * Read-ahead never decides what a batch contains: ends are still cut by prefetch rounds and written to the offset
 * log by the driver. It stops when the shard catches up with its tip (idle shards are polled by the rounds only),
 * when the buffer holds `MaxPages` pages, or when the query has not used the buffer for `IdleMillis`.
 */
private[sparkkinesis] object ReadAhead extends Logging {
  private val MaxPages = 5
  private val IdleMillis = 15000L

  /**
   * The calls read-ahead may have in flight at once, for all the executor's shards. Its threads wait on the network,
   * not the CPU: with two, a backlog on four shards kept two calls out and the service (or a local server) idle while
   * both pages were parsed; eight keep a call waiting behind each one in progress.
   */
  private[reader] val Threads = 8

  private lazy val pool: ScheduledExecutorService =
    Executors.newScheduledThreadPool(Threads, DaemonThreads.factory("kinesis-read-ahead", numbered = true))

  /** Starts reading ahead on `buffer` unless a loop already runs for it. */
  def start(buffer: ShardBuffer, maxRecordsPerCall: Int): Unit =
    if (buffer.startReadAhead()) pool.execute(() => step(buffer, maxRecordsPerCall))

  private def step(buffer: ShardBuffer, maxRecordsPerCall: Int): Unit =
    try {
      buffer.readAheadOnce(System.currentTimeMillis(), maxRecordsPerCall * MaxPages, IdleMillis) match {
        case Some(due) =>
          val wait = math.max(0L, due - System.currentTimeMillis())
          pool.schedule(new Runnable { def run(): Unit = step(buffer, maxRecordsPerCall) }, wait, TimeUnit.MILLISECONDS)
        case None =>
      }
    } catch {
      case NonFatal(e) =>
        buffer.stopReadAhead()
        logInfo(s"Read-ahead stopped: ${e.getMessage}")
    }
}
