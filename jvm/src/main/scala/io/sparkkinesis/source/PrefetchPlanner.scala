package io.sparkkinesis.source

import io.sparkkinesis.fetching.FetchSettings
import io.sparkkinesis.offsets.{KinesisSourceOffset, ShardKey, ShardPosition}
import io.sparkkinesis.reader.{FetchTaskSpec, ShardCut, ShardFetchRequest}
import io.sparkkinesis.compat.ScalaCompat._

/**
 * Driver-side planning of prefetch rounds, without Spark: which shards a round visits, the budget each gets, how
 * they are grouped into tasks and where those run, and what the executors' reports make of the offset. It keeps
 * the latest report of every shard (where its buffer lives, when it may be read again, how far it can go).
 */
private[sparkkinesis] final class PrefetchPlanner(
    sourceId: String,
    options: SourceOptions,
    isClosed: ShardKey => Boolean = _ => false,
    readSettings: FetchSettings = null,
    slots: () => Int = () => Int.MaxValue) {
  // How executors read: the options' settings, with the query's fan-out consumers (the stream acquired them).
  private val fetch = Option(readSettings).getOrElse(options.fetch)
  private var reports = Map.empty[ShardKey, ShardCut]

  /** Rounds planned so far; rotates which shards get the remainder of a budget. */
  private var rounds = 0L
  private var cutoff: Option[AvailableNowCutoff] = None

  def startAvailableNow(nowMillis: Long): Unit = cutoff = Some(AvailableNowCutoff(nowMillis))

  def availableNow: Boolean = cutoff.isDefined

  /** Drops what it knows of shards that left the offset (expired with the stream's retention). */
  def forget(gone: Set[ShardKey]): Unit = reports --= gone

  /** Every executor that holds buffers of this query, as far as the latest reports say. */
  def locations: Seq[String] = reports.values.map(_.location).toSeq.distinct.sorted

  /** What the shard's last cut covered, in bytes (0 before any report): how busy it is, to spread busy shards. */
  def load(key: ShardKey): Long = reports.get(key).map(_.bytes).getOrElse(0L)

  /** The executor that reported the shard last, where its buffer lives. */
  def location(key: ShardKey): Option[String] = reports.get(key).map(_.location)

  /** Shards to visit in this round: due for a call, or with records buffered beyond the last planned end. */
  def dueShards(offset: KinesisSourceOffset, readable: Seq[ShardKey], nowMillis: Long): Seq[ShardKey] =
    readable.filter { k =>
      reports.get(k) match {
        case None => true
        case Some(_) if cutoff.exists(_.finished(offset.shards(k), reports.get(k), isClosed(k))) => false
        case Some(r) => r.nextDueMillis <= nowMillis || r.bufferedRecords > 0 || r.end != offset.shards(k)
      }
    }

  /**
   * Whether "nothing new" is a final answer for `offset`. Without AvailableNow it always is. With it, that answer
   * ends the query, so it is given only once every readable shard has everything up to the cutoff planned.
   */
  def mayAnswerNothingNew(offset: KinesisSourceOffset, readable: Seq[ShardKey]): Boolean =
    cutoff.forall(c => readable.forall(k => c.finished(offset.shards(k), reports.get(k), isClosed(k))))

  /**
   * Under AvailableNow (or Once), the readable shards that may still hold records from before the cutoff, each
   * described with what its reader last reported, for [KINESIS_READ_STALLED].
   */
  def unfinished(offset: KinesisSourceOffset, readable: Seq[ShardKey]): Seq[String] = cutoff.toSeq.flatMap { c =>
    readable.filterNot(k => c.finished(offset.shards(k), reports.get(k), isClosed(k))).map { k =>
      val state = reports.get(k).fold("no report yet") { cut =>
        val (r, c) = (cut.reading, cut.reading.counts)
        s"${c.calls} calls, ${c.throttled} throttled, " +
          r.millisBehindLatest.fold("lag unknown")(ms => s"$ms ms behind") +
          (if (c.renewed + c.failed > 0) s", subscriptions renewed ${c.renewed}, failed ${c.failed}" else "")
      }
      s"shard ${k.shardId} of stream '${k.stream}' (read ${ShardPosition.describe(offset.shards(k))}" +
        s"${if (isClosed(k)) ", closed" else ""}; $state)"
    }
  }

  /** Whether the shard's latest report found it at the tip, with nothing buffered, where `offset` has it. */
  def caughtUpAt(key: ShardKey, offset: KinesisSourceOffset): Boolean = reports.get(key).exists { r =>
    r.caughtUp && r.bufferedRecords == 0 && !r.shardEnded && r.end == offset.shards(key)
  }

  /** When the shard's latest report said it may be called again (0 before any report). */
  def nextDueMillis(key: ShardKey): Long = reports.get(key).map(_.nextDueMillis).getOrElse(0L)

  /** The shards are not due before `untilMillis` (the driver looks at them itself). */
  def postpone(keys: Seq[ShardKey], untilMillis: Long): Unit =
    keys.foreach(k => reports.get(k).foreach(r => reports = reports.updated(k, r.copy(nextDueMillis = untilMillis))))

  /** How long to wait before the next shard is due again (10 ms to 1 s). */
  def pauseMillis(readable: Seq[ShardKey], nowMillis: Long): Long = {
    val wait = readable.flatMap(reports.get).map(_.nextDueMillis).minOption.map(_ - nowMillis).getOrElse(0L)
    math.max(10L, math.min(wait, 1000L))
  }

  /**
   * The tasks of a round over `due`, reading after `from`, with the trigger's budgets shared among the shards in
   * proportion to what each is known to have waiting: its buffered records beyond the last planned end, plus a full
   * page while it is behind the tip. A shard not reported yet, or caught up, gets a small share to show what it
   * has.
   */
  def plan(
      from: KinesisSourceOffset,
      due: Seq[ShardKey],
      maxRecords: Option[Long],
      maxBytes: Option[Long]): Seq[FetchTaskSpec] = {
    val recordBudgets = TriggerBudget.split(maxRecords, due.map(waitingRecords).toIndexedSeq, rounds)
    val byteBudgets = TriggerBudget.split(maxBytes, due.map(waitingBytes).toIndexedSeq, rounds)
    rounds += 1
    tasks(from, due.zipWithIndex.map { case (k, i) => k -> ((recordBudgets(i), byteBudgets(i))) })
  }

  /**
   * A second look within the same trigger when a round left part of the budget unused while some shards had more
   * buffered than their share let them take (the first round of a backlog knows nothing yet, so it shares
   * equally): those shards are cut again from the same `from`, each with what it took plus a part of what was
   * left, in proportion to what it has buffered. Their records are buffered already, so the second round reads
   * little or nothing. None when there is nothing to top up or no budget to share.
   */
  def topUp(
      from: KinesisSourceOffset,
      fresh: Seq[ShardCut],
      maxRecords: Option[Long],
      maxBytes: Option[Long]): Option[Seq[FetchTaskSpec]] = {
    val leftRecords = maxRecords.map(_ - fresh.map(_.records).sum)
    val leftBytes = maxBytes.map(_ - fresh.map(_.bytes).sum)
    // A shard cut at the AvailableNow cutoff has nothing more to give this query, whatever it buffers.
    val hungry = fresh.filter(r => r.bufferedRecords > 0 && !r.pastCutoff && r.end != ShardPosition.Ended).sortBy(_.key)
    if ((maxRecords.isEmpty && maxBytes.isEmpty) || hungry.isEmpty ||
      leftRecords.exists(_ <= 0) || leftBytes.exists(_ <= 0)) None
    else {
      val moreRecords = TriggerBudget.split(leftRecords, hungry.map(_.bufferedRecords).toIndexedSeq, rounds)
      val moreBytes = TriggerBudget.split(leftBytes, hungry.map(_.bufferedBytes).toIndexedSeq, rounds)
      rounds += 1
      Some(tasks(from,
          hungry.zipWithIndex.map { case (r, i) =>
            r.key -> ((plus(r.records, moreRecords(i)), plus(r.bytes, moreBytes(i))))
          }))
    }
  }

  private def plus(a: Long, b: Long): Long = if (b == Long.MaxValue) b else a + b

  private def waitingRecords(k: ShardKey): Long = reports.get(k).fold(0L) { r =>
    r.bufferedRecords + (if (r.caughtUp || r.shardEnded) 0L else options.fetch.maxRecordsPerCall.toLong)
  }

  private def waitingBytes(k: ShardKey): Long = reports.get(k).fold(0L) { r =>
    val perRecord = if (r.bufferedRecords > 0) r.bufferedBytes / r.bufferedRecords else 0L
    r.bufferedBytes + (if (r.caughtUp || r.shardEnded) 0L else perRecord * options.fetch.maxRecordsPerCall)
  }

  /**
   * One task per group of shards (`shardsPerTask`, raised so that a round has about as many tasks as Spark has
   * slots: [[TaskSlots]]), placed where their buffers live.
   */
  private def tasks(from: KinesisSourceOffset, budgets: Seq[(ShardKey, (Long, Long))]): Seq[FetchTaskSpec] = {
    val requests = budgets.map { case (k, (records, bytes)) =>
      ShardFetchRequest(k, options.streamsByName(k.stream), from.shards(k), records, bytes, isClosed(k))
    }
    val byKey = requests.map(r => r.key -> r).toMap
    val perTask = TaskSlots.shardsPerTask(requests.size, options.shardsPerTask, slots())
    val groups = ShardGrouping.group(requests.map(_.key), perTask, location, load)
    groups.map { keys =>
      FetchTaskSpec(sourceId, keys.map(byKey), options.connection, fetch, cutoff.map(_.millis),
        location(keys.head), opening = reports.isEmpty)
    }
  }

  /**
   * Shards a round found ended with nothing after where it started, by that start: a batch from there to `Ended`
   * has nothing to read. (A batch replayed after a restart does not know it and reads to the end once.)
   */
  private var endedEmpty = Map.empty[ShardKey, ShardPosition]

  def emptyToEnd(key: ShardKey, from: ShardPosition): Boolean = endedEmpty.get(key).contains(from)

  /** Takes a round's reports in; returns `from` with every shard's end moved to where its report says. */
  def absorb(from: KinesisSourceOffset, fresh: Seq[ShardCut]): KinesisSourceOffset = {
    fresh.foreach(r => reports = reports.updated(r.key, r))
    fresh.filter(r => r.end == ShardPosition.Ended && r.records == 0).foreach { r =>
      endedEmpty = endedEmpty.updated(r.key, from.shards(r.key))
    }
    fresh.foldLeft(from)((o, r) => if (r.end != o.shards(r.key)) o.updated(r.key, r.end) else o)
  }
}
