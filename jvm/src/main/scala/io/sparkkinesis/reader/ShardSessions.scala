package io.sparkkinesis.reader

import java.util.concurrent.{ConcurrentHashMap, Executors, ScheduledExecutorService, TimeUnit}

import scala.util.control.NonFatal

import org.apache.spark.internal.Logging

import io.sparkkinesis.fetching.{BufferedRecord, FetchSettings, ShardFetcher}
import io.sparkkinesis.offsets.{ShardKey, ShardPosition}
import io.sparkkinesis.runtime.DaemonThreads

/**
 * What an executor keeps of one shard of one running query between tasks, so that the next task goes on where the
 * last one stopped instead of opening the shard again: a micro-batch query's read-ahead buffer ([[ShardBuffer]]), or
 * a real-time query's fetcher parked at a batch's end ([[ParkedFetcher]]). Kept in [[ShardSessions]].
 */
private[sparkkinesis] trait ShardSession {

  /** How the session reads its shard: a task that reads otherwise does not use it. */
  def settings: FetchSettings

  /** When a task last used the session (epoch millis). */
  def lastUsed: Long

  /** Lets go of what the session holds (its fetcher, and a fan-out subscription with it). */
  def close(): Unit
}

/**
 * A real-time task's fetcher at its batch's end, for the next batch's task of the shard: where it stands (after the
 * last record handed on), the records it returned after that (to hand on first), how it was opened, and when it was
 * parked.
 */
private[sparkkinesis] final case class ParkedFetcher(
    fetcher: ShardFetcher,
    position: ShardPosition,
    leftover: Vector[BufferedRecord],
    settings: FetchSettings,
    closed: Boolean,
    returnedAt: Long) extends ShardSession {
  def lastUsed: Long = returnedAt
  def close(): Unit = fetcher.close()
}

/**
 * The executor's one registry of live shard sessions, at most one per (query's source id, shard), for micro-batch and
 * real-time tasks alike: one map, one sweep, one way to retire a stopped query, one rule for what still fits.
 *
 * - A micro-batch query's prefetch tasks make a shard's [[ShardBuffer]] here ([[buffer]] with a maker) and its batch
 *   tasks copy their ranges out of it ([[buffer]]); the buffer is shared by the tasks and its read-ahead.
 * - A real-time task that ends its batch [[give]]s each shard's fetcher back, standing after the last record it
 *   handed on, with the records it read after that; the next batch's task of the shard [[take]]s it when it starts at
 *   exactly that position and reads the same way. Taking removes the session, so a fetcher is never used by two
 *   tasks at once.
 *
 * What still fits ([[fits]]): a session opened with the settings the task reads with; a parked fetcher besides
 * stands where the task starts, was opened for the shard as the task sees it (closed or not), and has neither failed
 * nor reached the shard's end. A session that does not fit is closed and replaced (a retried prefetch attempt, which
 * must not open a second subscription, uses the buffer it finds instead).
 *
 * Sessions go away in one way: removed from the map first, atomically, then closed by whoever removed them, so a
 * session being closed is never handed to a task. That happens when they have not been used for their idle time
 * ([[BufferIdleMillis]] for buffers, `parkedIdleMillis` for parked fetchers), by a daemon sweep every
 * [[SweepMillis]] of the JVM's registry whether or not tasks still run here; or when their query stopped
 * ([[retire]]: in the driver's JVM when it stops, and on each executor at the query's release job or at the
 * application's next task there, which carries the stopped queries).
 */
private[sparkkinesis] final class ShardSessions(
    val parkedIdleMillis: Long = ShardSessions.ParkedIdleMillis,
    clock: () => Long = () => System.currentTimeMillis()) extends Logging {
  import ShardSessions._

  private val sessions = new ConcurrentHashMap[(String, ShardKey), ShardSession]()

  /** The micro-batch query's buffer of `key`, if this executor holds one. */
  def buffer(sourceId: String, key: ShardKey): Option[ShardBuffer] =
    sessions.get((sourceId, key)) match {
      case b: ShardBuffer => Some(b)
      case _ => None
    }

  /**
   * The shard's buffer, made by `make` if there is none or the one here does not fit (see [[fits]]); a buffer that
   * does not fit is kept when not `replaceMisfit` (a retried attempt, which reads with the buffer it finds).
   */
  def buffer(sourceId: String, key: ShardKey, settings: FetchSettings, replaceMisfit: Boolean)(
      make: => ShardBuffer): ShardBuffer = {
    startSweep()
    var replaced: Option[ShardSession] = None
    val made = sessions.compute((sourceId, key),
      (_, found) =>
        found match {
          case b: ShardBuffer if !replaceMisfit || fits(b, settings) => b
          case _ =>
            replaced = Option(found)
            make
        })
    replaced.foreach(closeQuietly)
    made.asInstanceOf[ShardBuffer]
  }

  /**
   * The parked fetcher of `shard` of query `sourceId` when it still fits a task starting at `position` with
   * `settings` (and `closed` alike), now the caller's alone; a parked fetcher that does not fit is closed.
   */
  def take(
      sourceId: String,
      shard: ShardKey,
      position: ShardPosition,
      settings: FetchSettings,
      closed: Boolean): Option[ParkedFetcher] =
    sessions.get((sourceId, shard)) match {
      case p: ParkedFetcher if sessions.remove((sourceId, shard), p) =>
        if (fits(p, settings) && p.position == position && p.closed == closed) Some(p)
        else {
          logDebug(s"Parked fetcher of shard ${shard.shardId} stands at ${p.position}, not $position: closed")
          closeQuietly(p)
          None
        }
      case _ => None
    }

  /**
   * Parks `fetcher` for the next task of `shard`, standing at `position` with `leftover` records after it to hand on
   * first. A fetcher that failed for good or whose shard ended is closed instead; so is whatever it replaces.
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
      startSweep()
      val before =
        sessions.put((sourceId, shard), ParkedFetcher(fetcher, position, leftover, settings, closed, clock()))
      before match {
        case p: ParkedFetcher if p.fetcher eq fetcher =>
        case null =>
        case other => closeQuietly(other)
      }
    }

  /** Closes the sessions of queries that stopped, wherever this registry holds them. */
  def retire(sourceIds: Seq[String]): Unit = if (sourceIds.nonEmpty) {
    val gone = sourceIds.toSet
    sessions.forEach((key, session) => if (gone.contains(key._1)) closeIfRemoved(key, session))
  }

  /** Closes the sessions no task used within their idle time: on every sweep, and once per prefetch task. */
  def evictIdle(): Unit = {
    val now = clock()
    sessions.forEach((key, session) => if (now - session.lastUsed > idleMillisOf(session)) closeIfRemoved(key, session))
  }

  private def idleMillisOf(session: ShardSession): Long = session match {
    case _: ShardBuffer => BufferIdleMillis
    case _ => parkedIdleMillis
  }

  /**
   * Whether `session` reads its shard the way a task with `settings` would open it now: with the same settings, and
   * (a parked fetcher's) still able to read on.
   */
  private def fits(session: ShardSession, settings: FetchSettings): Boolean = session match {
    case p: ParkedFetcher => p.settings == settings && usable(p.fetcher)
    case other => other.settings == settings
  }

  /**
   * Closes `session` if this call is the one that takes it out of the registry. The removal comes first and is
   * atomic, so a session being closed is never in the registry for a task to use; one a task took meanwhile is its own.
   */
  private def closeIfRemoved(key: (String, ShardKey), session: ShardSession): Unit =
    if (sessions.remove(key, session)) closeQuietly(session)

  /** Sessions kept now (tests, metrics). */
  def size: Int = sessions.size()

  /** Whether this registry holds a session of query `sourceId`. */
  def holds(sourceId: String): Boolean = {
    var found = false
    sessions.keySet().forEach(k => if (k._1 == sourceId) found = true)
    found
  }

  /**
   * The buffers at a glance: the bytes they hold, and how many need room (they hold records, or their shard is behind
   * its tip). Counted over every buffer at most every `UsageMillis`: a round over thousands of shards asks for it for
   * each of them, and counting each time would make a round cost the square of the shards.
   */
  def usage: Usage = {
    val now = System.currentTimeMillis()
    val last = lastUsage
    if (now - last.atMillis < UsageMillis) last
    else {
      var bytes = 0L
      var needing = 0
      sessions.values().forEach {
        case b: ShardBuffer => bytes += b.bytes; if (b.needsRoom) needing += 1
        case _ =>
      }
      val fresh = Usage(bytes, needing, now)
      lastUsage = fresh
      fresh
    }
  }

  @volatile private var lastUsage = Usage(0L, 0, 0L)

  /** Bytes held by every buffer here (bounded by `fetchBufferSize`), as of [[usage]]. */
  def totalBytes: Long = usage.bytes

  /**
   * What one buffer may hold of the executor's `limit` (`fetchBufferSize`): an equal share among the buffers that
   * need room (they hold records, or their shard is behind its tip; `buffer` counts whatever its state), as of
   * [[usage]]. Shards caught up at their tip with nothing buffered need none. With every buffer within its share, the
   * executor's buffers stay within the limit (plus the last page each read, and what the count's tenth of a second
   * of age lets through), and no shard is starved by others' read-ahead.
   */
  def share(buffer: ShardBuffer, limit: Long): Long =
    limit / math.max(1, usage.needingRoom + (if (buffer.needsRoom) 0 else 1))

  /** The JVM-wide registry's sweep, started by the first session kept (the JVM's registry only). */
  private lazy val sweeper: Option[ScheduledExecutorService] = if (this ne ShardSessions.shared) None
  else {
    val timer = Executors.newSingleThreadScheduledExecutor(DaemonThreads.factory("kinesis-shard-session-sweep"))
    timer.scheduleWithFixedDelay(
      () =>
        try evictIdle()
        catch { case NonFatal(e) => logWarning(s"Closing idle shard sessions failed: $e") },
      SweepMillis, SweepMillis, TimeUnit.MILLISECONDS)
    Some(timer)
  }

  private def startSweep(): Unit = sweeper

  private def usable(f: ShardFetcher): Boolean = !f.broken && !f.shardEnded

  private def closeQuietly(s: ShardSession): Unit =
    try s.close()
    catch { case NonFatal(e) => logDebug(s"Closing a shard session failed: $e") }

  private def closeQuietly(f: ShardFetcher): Unit =
    try f.close()
    catch { case NonFatal(e) => logDebug(s"Closing a fetcher failed: $e") }
}

private[sparkkinesis] object ShardSessions {

  /** How long a buffer no task uses is kept (a shard that moved to another executor, a query that ended unheard). */
  val BufferIdleMillis: Long = 2 * 60 * 1000L

  /** How long a parked fetcher waits for a task before the sweep closes it. */
  val ParkedIdleMillis: Long = 60000L

  /** How often the JVM's registry closes sessions idle past their time. */
  val SweepMillis: Long = 10000L

  /** How old [[ShardSessions.usage]] may be. */
  val UsageMillis = 100L

  final case class Usage(bytes: Long, needingRoom: Int, atMillis: Long)

  /** The JVM's registry, shared by every task of every query that runs here. */
  val shared: ShardSessions = new ShardSessions()
}
