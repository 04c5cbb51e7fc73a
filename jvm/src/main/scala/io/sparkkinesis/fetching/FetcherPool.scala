package io.sparkkinesis.fetching

import java.util.concurrent.{ConcurrentHashMap, Executors, ScheduledExecutorService, TimeUnit}

import scala.util.control.NonFatal

import org.apache.spark.internal.Logging

import io.sparkkinesis.runtime.DaemonThreads
import io.sparkkinesis.offsets.{ShardKey, ShardPosition}

/**
 * Fetchers kept open between the batches of real-time queries, one at most per (query's source id, shard), so that a
 * steady query opens no shard iterator (GetRecords) and no subscription (enhanced fan-out) when a batch ends.
 *
 * A real-time task that ends its batch [[give]]s each shard's fetcher back, with where the shard stands: the position
 * after the last record the task handed on, and the records the fetcher returned after it that the task did not hand
 * on (`leftover`, read first by whoever takes the fetcher). The next batch's task for the shard [[take]]s it when its
 * start is exactly that position and it reads the shard the same way (the same settings, closed or not); otherwise
 * the pooled fetcher is closed and the task opens its own, as it would without the pool. Taking removes the entry,
 * so a fetcher is never used by two tasks at once: a task that finds none opens its own, and of two given back for
 * one shard (a retried task) the older is closed.
 *
 * Fetchers no task took within `idleMillis` are closed by [[evictIdle]] (a daemon sweep of the JVM's pool every
 * [[FetcherPool.SweepMillis]]), and a stopped query's are closed by [[dropSources]], when it stops in this JVM or at
 * the next real-time task here (which carries the application's stopped queries).
 */
private[sparkkinesis] final class FetcherPool(
    val idleMillis: Long = FetcherPool.IdleMillis,
    clock: () => Long = () => System.currentTimeMillis()) extends Logging {
  import FetcherPool._

  private val entries = new ConcurrentHashMap[(String, ShardKey), Pooled]()

  /**
   * The pooled fetcher of `shard` of query `sourceId` when it stands at `position` and was opened with `settings`
   * (and `closed` alike), now the caller's alone; a pooled fetcher that does not fit is closed.
   */
  def take(
      sourceId: String,
      shard: ShardKey,
      position: ShardPosition,
      settings: FetchSettings,
      closed: Boolean): Option[Pooled] =
    Option(entries.remove((sourceId, shard))).flatMap { p =>
      if (p.position == position && p.settings == settings && p.closed == closed && usable(p.fetcher)) Some(p)
      else {
        logDebug(s"Pooled fetcher of shard ${shard.shardId} stands at ${p.position}, not $position: closed")
        closeQuietly(p.fetcher)
        None
      }
    }

  /**
   * Keeps `fetcher` for the next task of `shard`, standing at `position` with `leftover` records after it to hand on
   * first. A fetcher that failed for good or whose shard ended is closed instead.
   */
  def give(
      sourceId: String,
      shard: ShardKey,
      fetcher: ShardFetcher,
      position: ShardPosition,
      leftover: Vector[BufferedRecord],
      settings: FetchSettings,
      closed: Boolean): Unit =
    if (!usable(fetcher) || position == ShardPosition.Ended) closeQuietly(fetcher)
    else {
      fetcher.whenReady(() => ())
      sweeper
      val before = entries.put((sourceId, shard), Pooled(fetcher, position, leftover, settings, closed, clock()))
      if (before != null && (before.fetcher ne fetcher)) closeQuietly(before.fetcher)
    }

  /** Closes the pooled fetchers of queries that stopped. */
  def dropSources(sourceIds: Seq[String]): Unit = if (sourceIds.nonEmpty) {
    val gone = sourceIds.toSet
    entries.forEach((key, pooled) => if (gone.contains(key._1)) closeIfRemoved(key, pooled))
  }

  def dropSource(sourceId: String): Unit = dropSources(Seq(sourceId))

  /** Closes the fetchers no task took within [[idleMillis]] of their return. */
  def evictIdle(): Unit = {
    val now = clock()
    entries.forEach((key, pooled) => if (now - pooled.returnedAt > idleMillis) closeIfRemoved(key, pooled))
  }

  /**
   * Closes `pooled` if this call is the one that takes it out of the pool. The removal comes first and is atomic, so
   * a fetcher being closed is never in the pool for a task to [[take]]; and one a task took meanwhile is its own.
   */
  private def closeIfRemoved(key: (String, ShardKey), pooled: Pooled): Unit =
    if (entries.remove(key, pooled)) closeQuietly(pooled.fetcher)

  /** Fetchers pooled now (tests, metrics). */
  def size: Int = entries.size()

  /** Whether a fetcher of query `sourceId` is pooled. */
  def holds(sourceId: String): Boolean = {
    var found = false
    entries.keySet().forEach(k => if (k._1 == sourceId) found = true)
    found
  }

  /** The JVM-wide pool's sweep, started by the first fetcher given back (the JVM's pool only). */
  private lazy val sweeper: Option[ScheduledExecutorService] = if (this ne FetcherPool.shared) None
  else {
    val timer = Executors.newSingleThreadScheduledExecutor(DaemonThreads.factory("kinesis-fetcher-pool-sweep"))
    timer.scheduleWithFixedDelay(
      () =>
        try evictIdle()
        catch { case NonFatal(e) => logWarning(s"Closing idle pooled fetchers failed: $e") },
      SweepMillis, SweepMillis, TimeUnit.MILLISECONDS)
    Some(timer)
  }

  private def usable(f: ShardFetcher): Boolean = !f.broken && !f.shardEnded

  private def closeQuietly(f: ShardFetcher): Unit =
    try f.close()
    catch { case NonFatal(e) => logDebug(s"Closing a pooled fetcher failed: $e") }
}

private[sparkkinesis] object FetcherPool {

  /** How long a fetcher given back waits for a task before the sweep closes it. */
  val IdleMillis: Long = 60000L

  /** How often the JVM's pool closes fetchers idle past [[IdleMillis]]. */
  val SweepMillis: Long = 10000L

  /**
   * A fetcher in the pool: where it stands (after the last record handed on), the records it returned after that
   * (to hand on first), how it was opened, and when it was given back.
   */
  final case class Pooled(
      fetcher: ShardFetcher,
      position: ShardPosition,
      leftover: Vector[BufferedRecord],
      settings: FetchSettings,
      closed: Boolean,
      returnedAt: Long)

  /** The JVM's pool, shared by the real-time tasks of every query that run here. */
  val shared: FetcherPool = new FetcherPool()
}
