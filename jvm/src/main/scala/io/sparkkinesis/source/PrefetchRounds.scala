package io.sparkkinesis.source

import org.apache.spark.sql.connector.read.streaming.{CompositeReadLimit, ReadAllAvailable, ReadLimit, ReadMaxRows}

import io.sparkkinesis.errors.KinesisErrors
import io.sparkkinesis.offsets.{KinesisSourceOffset, ShardKey}
import io.sparkkinesis.compat.ScalaCompat._

/**
 * The prefetch rounds of a micro-batch read as the driver runs them, for the stream's `latestOffset`: from a start
 * (brought in step with the streams and the shard listing by `inStep`), the shards that are due ([[PrefetchPlanner]]),
 * less the quiet ones the [[QuietWatch]] looks at itself, are read ahead on the executors by a small Spark job
 * ([[PrefetchJob]]), with a second round for shards that have a backlog when others left their budget unused. The
 * ends the executors report become the next offset. Under AvailableNow and Once it waits for the shards that may
 * still hold records from before the cutoff; a quiet query's repeated asks from the same start are answered at no
 * cost until something can have changed.
 */
private[source] final class PrefetchRounds(
    options: SourceOptions,
    planner: PrefetchPlanner,
    tracker: ShardTracker,
    quietWatch: QuietWatch,
    metrics: SourceMetrics,
    prefetchJob: PrefetchJob,
    inStep: (KinesisSourceOffset, Boolean) => KinesisSourceOffset) {

  /**
   * The next offset after `from` for Spark's `latestOffset` under `limit`: everything available at once under
   * Trigger.Once (`ReadAllAvailable`), else a round within the trigger's budgets, or `from` itself when nothing is new.
   */
  def latest(from: KinesisSourceOffset, limit: ReadLimit): KinesisSourceOffset = {
    limit match {
      case _: ReadAllAvailable => everythingAvailable(from)
      case _ =>
        nothingNew match {
          // Asked again from the same start before anything can have changed: the same answer, at no cost.
          case Some((same, until)) if (same eq from) && System.currentTimeMillis() < until && !quietWatch.mayHaveNews =>
            from
          case _ =>
            nothingNew = None
            val answer = next(from, limitRows(limit), options.maxBytesPerTrigger)
            if (answer == from && !planner.availableNow) nothingNew = Some((from, quietUntil))
            answer
        }
    }
  }

  /**
   * The last start that had nothing new after it, and until when nothing can change that (the next shard due, the
   * next listing): Spark asks every 10 ms while a query is quiet, and with hundreds of shards looking through all of
   * them each time was most of a quiet query's CPU.
   */
  private var nothingNew: Option[(KinesisSourceOffset, Long)] = None

  /** Set by [[next]] when it finds nothing new: when the first readable shard is due, or the next listing. */
  private var quietUntil = 0L

  /**
   * Trigger.Once: one batch with every record that had arrived when it started, in every shard (the children of
   * shards that close included), and no read limit, as Spark asks. Rounds run as under AvailableNow, each from the
   * end the last one found, until every shard is planned up to the cutoff; the batch then re-reads from Kinesis
   * what the buffers no longer hold, so memory stays within `fetchBufferSize` whatever the backlog.
   */
  private def everythingAvailable(start: KinesisSourceOffset): KinesisSourceOffset = {
    once = true
    if (!planner.availableNow) planner.startAvailableNow(System.currentTimeMillis())
    var end = start
    var more = true
    while (more) {
      val further = next(end, None, None)
      more = further != end
      end = further
    }
    end
  }

  /** Whether the query runs under Trigger.Once (Spark asked for everything available), for messages. */
  private var once = false

  /**
   * The next offset after `start` within the budgets: a prefetch round on the shards that are due. Under
   * AvailableNow or Once it waits for the shards that may still hold records from before the cutoff, at most
   * `stallTimeout` without any of them moving: then the query fails with [KINESIS_READ_STALLED] naming them.
   */
  private def next(start: KinesisSourceOffset, rows: Option[Long], bytes: Option[Long]): KinesisSourceOffset = {
    val from = inStep(start, false)
    val readable = tracker.readable(from)
    val waitingSince = System.currentTimeMillis()
    while (true) {
      val due = watched(from, planner.dueShards(from, readable, System.currentTimeMillis()))
      if (due.nonEmpty) {
        val next = prefetch(from, due, rows, bytes)
        if (next != from) return next
      }
      // Without AvailableNow, "nothing new" is an answer. With it, an answer of "nothing" ends the query, so
      // wait for the shards that may still hold records from before the cutoff, and list the shards once more
      // before ending: a shard that closed since the last listing has children it may not know yet.
      if (planner.mayAnswerNothingNew(from, readable)) {
        if (planner.availableNow) {
          val relisted = tracker.refresh(from, System.currentTimeMillis(), force = true)
          if (relisted != from) return relisted
        }
        val now = System.currentTimeMillis()
        quietUntil = math.min(now + planner.pauseMillis(readable, now), tracker.nextListingMillis)
        return from
      }
      val waited = System.currentTimeMillis() - waitingSince
      if (waited > options.stallMillis)
        throw KinesisErrors.readStalled(if (once) "Trigger.Once" else "Trigger.AvailableNow", waited / 1000,
          planner.unfinished(from, readable))
      Thread.sleep(planner.pauseMillis(readable, System.currentTimeMillis()))
    }
    from
  }

  /**
   * `due` without the quiet shards (caught up, no records for `quietAfterMillis`): the driver watches those itself
   * and they are due again an `idleFetchPeriod` later; with the watched shards in which it found news. A round with
   * nothing to visit runs no Spark job.
   */
  private def watched(from: KinesisSourceOffset, due: Seq[ShardKey]): Seq[ShardKey] =
    if (planner.availableNow) due
    else {
      val now = System.currentTimeMillis()
      val (quiet, others) = due.partition(k => planner.caughtUpAt(k, from) && quietWatch.quiet(k, now))
      quietWatch.watch(quiet.map(k => (k, from.shards(k), planner.nextDueMillis(k))), now)
      planner.postpone(quiet, now + options.fetch.idlePeriodMillis)
      val woken = quietWatch.woken().filter(k => from.shards.contains(k) && !others.contains(k))
      others ++ woken
    }

  private def prefetch(
      from: KinesisSourceOffset,
      due: Seq[ShardKey],
      rows: Option[Long],
      bytes: Option[Long]): KinesisSourceOffset = {
    val first = prefetchJob.run(planner.plan(from, due, rows, bytes))
    // A backlog on a few shards: give them what the others left unused, within the same trigger.
    val fresh = planner.topUp(from, first, rows, bytes).fold(first) { tasks =>
      val again = prefetchJob.run(tasks).map(r => r.key -> r).toMap
      first.map(r => again.getOrElse(r.key, r))
    }
    val now = System.currentTimeMillis()
    metrics.recordRound(fresh, now)
    fresh.foreach { r =>
      quietWatch.heard(r.key, now, found = r.records > 0 || r.bufferedRecords > 0 || !r.caughtUp,
        settled = r.caughtUp && r.bufferedRecords == 0 && !r.shardEnded)
    }
    val next = planner.absorb(from, fresh)
    if (next.shards == from.shards) from
    else next.pinningFirstsOf(from, fresh.flatMap(r => r.first.map(f => r.key -> f.sequenceNumber)).toMap)
  }

  /** The row limit of a trigger; the largest row count stands for none (see [[getDefaultReadLimit]]). */
  private def limitRows(limit: ReadLimit): Option[Long] = (limit match {
    case m: ReadMaxRows => Some(m.maxRows())
    case c: CompositeReadLimit => c.getReadLimits.collect { case m: ReadMaxRows => m.maxRows() }.toSeq.minOption
    case _ => None
  }).filter(_ != Long.MaxValue)
}
