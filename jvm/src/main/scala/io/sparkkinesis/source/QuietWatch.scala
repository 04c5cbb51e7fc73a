package io.sparkkinesis.source

import java.util.concurrent.{ConcurrentHashMap, RejectedExecutionException, ScheduledThreadPoolExecutor}
import java.util.concurrent.{ThreadLocalRandom, TimeUnit}
import java.util.concurrent.atomic.AtomicLong

import io.sparkkinesis.compat.CollectionConverters._

import scala.util.control.NonFatal

import org.apache.spark.internal.Logging

import io.sparkkinesis.runtime.DaemonThreads
import io.sparkkinesis.fetching.{ShardFetcher, ShardFetchers}
import io.sparkkinesis.offsets.{ShardKey, ShardPosition}

/**
 * What quiet shards cost. While records flow, shards are read by prefetch rounds, each a small Spark job. A shard
 * in which no round has found a record for `quietAfterMillis`, caught up at its tip, the last round included (so a
 * batch longer than that between two rounds that found records leaves a steady shard busy), is *quiet*: the driver
 * looks for new records on it itself instead, in the background: one GetRecords call of one record, at the pace the
 * executors would have polled it (`idleFetchPeriod`), from where the query stands. Rounds then visit only the
 * shards that are not quiet, so a quiet query runs no Spark job at all, and a query with a few busy shards among
 * many quiet ones runs rounds of the busy ones only. A quiet shard with news (a record, its end, or an error for
 * the executors to meet and report) wakes up: the next round reads it. If that round leaves it caught up, the
 * shard trickles and goes back to the watch at once; if not (a backlog), or if the watch's first look already found
 * news (records come faster than the watch looks: a busy shard that only seemed quiet because its records paused
 * for `quietAfterMillis`), it stays in the rounds until it is quiet again. The records the driver sees are not
 * kept: the round reads them.
 *
 * The calls run on the watch's own threads, each shard on its own schedule, so a shard's news is taken up by the
 * next `latestOffset` call without waiting for the looks at other shards. Only the stream execution thread calls
 * [[quiet]], [[watch]], [[woken]] and [[news]].
 */
private[sparkkinesis] final class QuietWatch(
    options: SourceOptions,
    quietAfterMillis: Long = QuietWatch.QuietAfterMillis)
  extends Logging {
  // When a round last found something in each shard, or the shard was first asked about (stream thread only).
  private var lastNews = Map.empty[ShardKey, Long]
  @volatile private var closed = false
  private val watches = new ConcurrentHashMap[ShardKey, Watch]()
  private val lookCalls = new AtomicLong()
  private var scheduler: Option[ScheduledThreadPoolExecutor] = None

  /** One shard being watched from `at`: its fetcher (opened on the first look) and whether it found news. */
  private final class Watch(val key: ShardKey, val at: ShardPosition) {
    @volatile var cancelled = false
    @volatile var woke = false
    // Set (before `woke`) when the first look found news: the shard had records again within a look's delay of
    // going quiet, so it is busy, not trickling (a batch that took longer than `quietAfterMillis` made it look quiet).
    @volatile var wokeAtOnce = false
    var looks = 0 // on the watch's threads, one look at a time
    var fetcher: ShardFetcher = _
  }

  /** GetRecords calls the driver has made looking for records (the `driverGetRecordsCalls` metric). */
  def calls: Long = lookCalls.get()

  /** Shards the driver watches now (the `quietShards` metric). */
  def watching: Int = watches.size

  /**
   * What a round found in the shard: `found`, records (or it is not caught up); `settled`, it is caught up at its tip
   * with nothing buffered beyond the cut. Records are news (the shard is not quiet, and no longer watched), except
   * in the first round after the watch woke the shard when that round leaves it settled: a shard that trickles (a
   * record now and then) goes back to the watch at once, so each of its records costs one round, not a round every
   * `idleFetchPeriod` for `quietAfterMillis` after it.
   */
  def heard(key: ShardKey, nowMillis: Long, found: Boolean, settled: Boolean): Unit = {
    val trickled = backFromWatch.contains(key) && settled
    backFromWatch -= key
    val news = found && !trickled
    foundLast = if (news) foundLast + key else foundLast - key
    if (news) {
      lastNews = lastNews.updated(key, nowMillis)
      Option(watches.remove(key)).foreach { w =>
        w.cancelled = true
        logDebug(s"Records again in $key: prefetch rounds read it")
      }
    }
  }

  // Shards the watch woke whose first round since has not reported yet (stream thread only).
  private var backFromWatch = Set.empty[ShardKey]

  // Shards whose last round found records (stream thread only): busy, however long ago that round was. Between two
  // rounds a batch runs, and a batch longer than `quietAfterMillis` must not make a steady shard look quiet (a new
  // iterator on the driver, and a look, after every such batch).
  private var foundLast = Set.empty[ShardKey]

  /**
   * Whether no round has found records in the shard for `quietAfterMillis` (counted from the first time it was asked
   * about when no round has found any yet), and the last round found none either.
   */
  def quiet(key: ShardKey, nowMillis: Long): Boolean = !foundLast.contains(key) && (lastNews.get(key) match {
    case Some(last) => nowMillis - last >= quietAfterMillis
    case None =>
      lastNews = lastNews.updated(key, nowMillis)
      false
  })

  /**
   * Watches quiet shards from their positions in the offset, unless they are watched from there already. The first
   * look at each is at its `dueMillis` (when a round would have called next) plus a random part of
   * `idleFetchPeriod`, which spreads the calls of shards that went quiet together over the period.
   */
  def watch(shards: Seq[(ShardKey, ShardPosition, Long)], nowMillis: Long): Unit = {
    val added = shards.filter { case (key, at, due) =>
      Option(watches.get(key)) match {
        case Some(w) if w.at == at => false
        case old =>
          old.foreach(_.cancelled = true)
          val w = new Watch(key, at)
          watches.put(key, w)
          val jitter = ThreadLocalRandom.current().nextLong(math.max(1L, options.fetch.idlePeriodMillis))
          schedule(w, math.max(0L, due - nowMillis) + jitter)
          true
      }
    }
    if (added.nonEmpty) {
      val shards = if (added.size == 1) "1 shard" else s"${added.size} shards"
      logInfo(s"No records for ${quietAfterMillis / 1000} s in $shards: the driver watches for new records " +
        s"(${watches.size} shards in all); prefetch rounds visit the others")
    }
  }

  /** Stops watching shards that left the offset, and forgets them. */
  def forget(gone: Set[ShardKey]): Unit = {
    lastNews --= gone
    backFromWatch --= gone
    foundLast --= gone
    gone.foreach(k => Option(watches.remove(k)).foreach(_.cancelled = true))
  }

  /** Set when a look finds news, cleared by [[woken]]: whether [[woken]] may have something to say. */
  @volatile private var anyWoke = false
  def mayHaveNews: Boolean = anyWoke

  /** The watched shards in which the driver found news since the last call; they are no longer watched. */
  def woken(): Seq[ShardKey] = {
    anyWoke = false
    val found = watches.values().asScala.filter(_.woke).toSeq
    found.foreach(w => watches.remove(w.key, w))
    // Only a shard that waited for its news trickles; one with news at the first look stays in the rounds until it
    // is quiet again (else a steady stream whose rounds leave it caught up would go back and forth, a new iterator
    // on the driver each time).
    backFromWatch ++= found.filterNot(_.wokeAtOnce).map(_.key)
    found.map(_.key).sortBy(k => (k.stream, k.shardId))
  }

  private def schedule(w: Watch, delayMillis: Long): Unit =
    try threads().schedule(new Runnable { def run(): Unit = look(w) }, delayMillis, TimeUnit.MILLISECONDS)
    catch { case _: RejectedExecutionException => () } // closed

  private def look(w: Watch): Unit = if (!w.cancelled) {
    w.looks += 1
    if (hasNews(w)) { w.wokeAtOnce = w.looks == 1; w.woke = true; anyWoke = true }
    else if (!w.cancelled) schedule(w, options.fetch.idlePeriodMillis)
  }

  /**
   * Whether the shard has news after where it is watched from: records, its end, or a failure the executors should
   * meet and report (the driver does not judge it). One call of one record.
   */
  private def hasNews(w: Watch): Boolean =
    try {
      if (w.fetcher == null) {
        w.fetcher = ShardFetchers.open(options.connection, options.streamsByName(w.key.stream), w.key.shardId,
          ShardPosition.resumeFrom(w.at)._1, options.fetch.copy(maxRecordsPerCall = 1))
      }
      w.fetcher.shardEnded || {
        lookCalls.incrementAndGet()
        val page = w.fetcher.fetch()
        page.records.nonEmpty || page.shardEnded
      }
    } catch {
      case NonFatal(e) =>
        logInfo(s"Looking for records on ${w.key} failed (${e.getClass.getSimpleName}); a prefetch round reads it")
        true
    }

  private def threads(): ScheduledThreadPoolExecutor = synchronized {
    if (closed) throw new RejectedExecutionException("the quiet watch is closed")
    scheduler.getOrElse {
      val created = new ScheduledThreadPoolExecutor(QuietWatch.Threads,
        DaemonThreads.factory("kinesis-quiet-watch", numbered = true))
      created.setRemoveOnCancelPolicy(true)
      scheduler = Some(created)
      created
    }
  }

  def close(): Unit = {
    val pool = synchronized { closed = true; val p = scheduler; scheduler = None; p }
    watches.values().asScala.foreach(_.cancelled = true)
    watches.clear()
    pool.foreach { p => p.shutdownNow(); p.awaitTermination(10, TimeUnit.SECONDS) }
  }
}

private[sparkkinesis] object QuietWatch {

  /**
   * How long a shard goes without records before the driver takes over looking for them: a few `idleFetchPeriod`s,
   * so a shard whose records come in bursts with short gaps stays in the rounds (no handover, and a new iterator on
   * the driver, at every gap).
   */
  val QuietAfterMillis = 5000L

  /** Driver threads that make the calls (they wait on the network, not the CPU). */
  val Threads = 8
}
