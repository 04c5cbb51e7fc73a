package io.sparkkinesis.metrics

import java.time.Instant
import java.util.concurrent.{Executors, ScheduledExecutorService, ScheduledFuture, TimeUnit}

import scala.util.control.NonFatal

import org.apache.spark.internal.Logging

import io.sparkkinesis.errors.KinesisErrors
import io.sparkkinesis.runtime.DaemonThreads

/**
 * Publishes one query's figures to CloudWatch (`cloudWatchMetrics=true`), from the driver, at each [[tick]]: the
 * scheduler calls it once an interval (a minute; [[CloudWatchPublisher.DefaultIntervalMillis]]), on a thread of its
 * own, never on a record's path. Each tick sends, per stream read, the lag (`maxMsBehindLatest`, `avgMsBehindLatest`)
 * and the backlog estimate (`pendingRecords`, `pendingBytes`) as they are, and the counts since the last published
 * tick (`throttledCalls`, `recordsRead`, `bytesRead`; for the sink `recordsWritten`, `bytesWritten`,
 * `throttledRecords`), in as few PutMetricData calls as fit (1,000 metrics a call).
 *
 * CloudWatch failing never fails the query: the first failure is logged as a warning (later ones at debug level, and
 * the recovery once at info), each one is counted ([[failures]], a gauge of the query's Spark metrics), and the
 * publisher backs off, skipping 1, 3, 7, ... ticks after consecutive failures, at most [[CloudWatchPublisher.MaxSkipped]].
 * Counts not published for a failure are kept and go out with the next tick that succeeds.
 */
private[sparkkinesis] final class CloudWatchPublisher(
    queryName: String,
    settings: CloudWatchSettings,
    stats: () => QueryStats,
    sender: CloudWatchSender)
  extends Logging {
  import CloudWatchPublisher._

  // What the last successful tick published of each running total, by (side, stream, metric).
  private var published = Map.empty[(String, String, String), Long]
  private var streak = 0
  private var toSkip = 0
  private var warned = false
  @volatile private var failed = 0L
  @volatile private var sent = 0L
  // Guards `scheduled`: not the publisher's own lock, which a tick holds through its call to CloudWatch.
  private val scheduling = new Object
  @volatile private var scheduled: Option[ScheduledFuture[_]] = None

  /** PutMetricData rounds that failed since the query started. */
  def failures: Long = failed

  /** Ticks whose data all reached CloudWatch. */
  def publishes: Long = sent

  /** Sends the query's figures now, unless backing off after failures. */
  def tick(now: Instant): Unit = synchronized {
    if (toSkip > 0) toSkip -= 1
    else {
      val current = stats()
      val (data, totals) = datums(current)
      try {
        data.grouped(CloudWatchSender.MaxPerCall).foreach(chunk => sender.put(settings.namespace, now, chunk))
        published = totals
        sent += 1
        if (streak > 0) logInfo(s"Publishing query $queryName's metrics to CloudWatch again after $streak failures")
        streak = 0
      } catch {
        case NonFatal(e) =>
          failed += 1
          streak += 1
          toSkip = math.min((1 << math.min(streak, 16)) - 1, MaxSkipped)
          val what = s"Could not publish query $queryName's metrics to CloudWatch (namespace ${settings.namespace}): " +
            s"${KinesisErrors.safeMessage(e)}; the query goes on, and publishing is tried again in ${toSkip + 1} " +
            "interval(s)"
          if (!warned) {
            warned = true
            logWarning(what + " (further failures are logged at debug level and counted in the cloudWatchFailures " +
              "metric)")
          } else logDebug(what)
      }
    }
  }

  /** The data of `s`, and the running totals it was computed from. */
  private def datums(s: QueryStats): (Seq[Datum], Map[(String, String, String), Long]) = {
    var totals = Map.empty[(String, String, String), Long]
    def delta(side: String, stream: String, metric: String, total: Long): Double = {
      val key = (side, stream, metric)
      totals += key -> total
      math.max(0L, total - published.getOrElse(key, 0L)).toDouble
    }
    val reads = s.reads.flatMap { r =>
      val dims = dimensions(Some(r.stream))
      Seq(
        Datum("maxMsBehindLatest", Datum.Milliseconds, r.maxMsBehindLatest.toDouble, dims),
        Datum("avgMsBehindLatest", Datum.Milliseconds, r.avgMsBehindLatest, dims),
        Datum("pendingRecords", Datum.Count, r.pendingRecords.toDouble, dims),
        Datum("pendingBytes", Datum.Bytes, r.pendingBytes.toDouble, dims),
        Datum("throttledCalls", Datum.Count, delta("read", r.stream, "throttledCalls", r.throttledCalls), dims),
        Datum("recordsRead", Datum.Count, delta("read", r.stream, "recordsRead", r.recordsRead), dims),
        Datum("bytesRead", Datum.Bytes, delta("read", r.stream, "bytesRead", r.bytesRead), dims))
    }
    val writes = s.writes.toSeq.flatMap { w =>
      val dims = dimensions(w.stream)
      val stream = w.stream.getOrElse("")
      Seq(
        Datum("recordsWritten", Datum.Count, delta("write", stream, "recordsWritten", w.recordsWritten), dims),
        Datum("bytesWritten", Datum.Bytes, delta("write", stream, "bytesWritten", w.bytesWritten), dims),
        Datum("throttledRecords", Datum.Count, delta("write", stream, "throttledRecords", w.throttledRecords), dims))
    }
    (reads ++ writes, totals)
  }

  private def dimensions(stream: Option[String]): Seq[(String, String)] =
    (Dimensions.QueryName -> queryName) +: (stream.map(Dimensions.StreamName -> _).toSeq ++ settings.dimensions)

  /** Ticks every `intervalMillis` on the publishers' thread until [[stop]]. */
  def start(intervalMillis: Long): Unit = scheduling.synchronized {
    if (scheduled.isEmpty) {
      val task: Runnable = () =>
        try tick(Instant.now())
        catch { case NonFatal(e) => logDebug(s"CloudWatch tick of query $queryName failed", e) }
      scheduled = Some(timer.scheduleAtFixedRate(task, intervalMillis, intervalMillis, TimeUnit.MILLISECONDS))
    }
  }

  /**
   * No more ticks after a last round on the publishers' thread, after any tick under way, which sends what the run
   * counted since the last tick that went out (a stopped query's last minute, and any counts a backoff held back)
   * whatever the backoff; then the sender closes. The query's stop does not wait for that round, and a JVM that exits
   * at once may not run it.
   */
  def stop(): Unit = scheduling.synchronized {
    scheduled match {
      case Some(ticking) =>
        ticking.cancel(false)
        scheduled = None
        timer.execute { () =>
          try {
            synchronized { toSkip = 0 }
            tick(Instant.now())
          } catch { case NonFatal(e) => logDebug(s"The last CloudWatch round of query $queryName failed", e) }
          finally sender.close()
        }
      case None => sender.close()
    }
  }
}

private[sparkkinesis] object CloudWatchPublisher {

  /** How often a query publishes: once a minute, CloudWatch's standard resolution. */
  val DefaultIntervalMillis = 60000L

  /**
   * A shorter interval, for the connector's own tests only: the Spark setting
   * `spark.sparkkinesis.internal.cloudWatchIntervalMillis` (not an option, not documented for users).
   */
  val IntervalSetting = "spark.sparkkinesis.internal.cloudWatchIntervalMillis"

  /** The most ticks skipped in a row after failures: with the default interval, a try every 16 minutes at least. */
  val MaxSkipped = 15

  /** One thread for every query's publisher: a tick is one or a few HTTP calls a minute. */
  private lazy val timer: ScheduledExecutorService =
    Executors.newSingleThreadScheduledExecutor(DaemonThreads.factory("spark-kinesis-cloudwatch"))
}
