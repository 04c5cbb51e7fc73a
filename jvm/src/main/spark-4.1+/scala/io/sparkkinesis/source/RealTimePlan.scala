package io.sparkkinesis.source

import org.apache.spark.internal.Logging
import org.apache.spark.sql.connector.read.InputPartition
import org.apache.spark.sql.connector.read.streaming.PartitionOffset

import io.sparkkinesis.compat.SparkShim
import io.sparkkinesis.errors.KinesisErrors
import io.sparkkinesis.offsets.{KinesisSourceOffset, ShardKey, ShardPosition}
import io.sparkkinesis.reader.{KinesisPartitionOffset, KinesisRealTimeInputPartition}

/**
 * The batches of a read in real-time mode as the driver plans them, through the stream's [[StreamView]]: each batch
 * reads the shards it may from its start (listed when a listing is due, or at once after a shard ended in the batch
 * before), in as many tasks as the application has slots for ([[TaskSlots]]), each shard on the executor its task of
 * the batch before ran on while that executor is there ([[RealTimeGrouping]]: its fetcher is parked there). When the
 * tasks end, their offsets merge into the batch's end. Tasks that started after the batch's end are warned of, and
 * when some do while others start in time in two batches in a row, the next batches run only as many tasks as
 * started in time, until the application's slots change or enough are free again (see `KinesisRealTimeStream`).
 */
private[source] final class RealTimePlan(options: SourceOptions, view: StreamView) extends Logging {

  /**
   * The running batch's plan: the start Spark gave, that start as planned (new shards added, expired ones dropped:
   * what the tasks read from, and what [[merge]] builds the end on) and the partitions. Spark may plan a
   * batch's scan more than once; each time gets the same plan, until the batch's offsets are merged.
   */
  @volatile private var plan: Option[Planned] = None

  /** Where each shard's task of the last batch ran (its fetcher is pooled there): an executor's location. */
  @volatile private var placed = Map.empty[ShardKey, String]

  /**
   * When some tasks of a batch got their slot too late: the application's task slots then, and the tasks that got
   * theirs in time, which the next batches do not exceed while the application has those slots.
   */
  @volatile private var fitted: Option[(Int, Int)] = None

  /** Whether some tasks of the last batch started too late while others started in time. */
  @volatile private var shortBefore = false

  /** Whether a shard ended in the last batch, so the next one lists the shards to find its children. */
  @volatile private var shardEnded = false

  /** The shards per task last warned about, so that a steady query warns once. */
  @volatile private var warnedPerTask: Option[Int] = None

  /** The partitions of the batch from `begin` (the same ones each time Spark asks, until the batch is merged). */
  def partitions(begin: KinesisSourceOffset): Array[InputPartition] = {
    plan.filter(_.start == begin).getOrElse {
      val (from, readable, endedParents) = view.shardsToRead(begin, listNow = shardEnded)
      shardEnded = false
      val executors = TaskSlots.executors
      val appSlots = TaskSlots.total(executors)
      if (fitted.exists(_._1 != appSlots)) fitted = None
      fitted.foreach { case (_, fit) =>
        // This query's tasks of the batch before have ended: the tasks running now are other jobs'. The tasks the
        // batch would run unfitted, as the plan below makes them.
        val wanted = TaskSlots.tasks(readable.size, options.shardsPerTask, appSlots)
        val free = appSlots - TaskSlots.busy
        if (wanted > fit && free >= wanted) {
          fitted = None
          logInfo(s"Real-time mode: $free of the application's $appSlots task slots are free again; the next " +
            s"batches run up to $wanted tasks instead of $fit")
        }
      }
      val taskSlots = fitted.fold(appSlots)(f => math.min(appSlots, f._2))
      val perTask = TaskSlots.shardsPerTask(readable.size, options.shardsPerTask, taskSlots)
      if (perTask != options.shardsPerTask && !warnedPerTask.contains(perTask)) {
        warnedPerTask = Some(perTask)
        logWarning(s"Real-time mode: ${readable.size} shards to read with $taskSlots task slots; each task reads " +
          s"$perTask shards instead of ${options.shardsPerTask} (shardsPerTask), since a task without a slot for " +
          "the whole batch reads nothing. Give the query one slot per shard for one task per shard.")
      }
      // A shard goes back to the executor of its last task while that executor is there.
      val live = (at: String) => executors.contains(SparkShim.executorId(at))
      val groups = RealTimeGrouping.group[ShardKey](readable, perTask, k => placed.get(k).filter(live),
        at => executors.getOrElse(SparkShim.executorId(at), 0))
      val settings = view.readSettings
      // With nothing to read (every shard ended, the children not listed yet), one task waits out the batch, so an
      // empty batch does not follow another at once.
      val tasks = if (groups.isEmpty) Seq((Seq.empty[ShardKey], None)) else groups
      val partitions = tasks.map { case (keys, at) =>
        KinesisRealTimeInputPartition(keys.map(k => k -> from.shards(k)), options.streamsByName, options.connection,
          settings, endedParents, keys.filter(view.isClosed).toSet, view.sourceId, RetiredSources.recent,
          at): InputPartition
      }.toArray
      plan = Some(Planned(begin, from, partitions, appSlots))
      plan.get
    }.partitions
  }

  /** The batch's end: where its tasks read to (`offsets`, one per task) over the start it was planned from. */
  def merge(offsets: Array[PartitionOffset]): KinesisSourceOffset = {
    val planned = plan.getOrElse(throw new IllegalStateException("mergeOffsets before planInputPartitions"))
    val start = planned.from
    plan = None
    val tasks = offsets.toSeq.map {
      case p: KinesisPartitionOffset => p
      case other => throw new IllegalArgumentException(s"not an offset of this source: $other")
    }
    val reports = tasks.flatMap(_.reports)
    view.recordBatchReports(reports)
    val reached = tasks.flatMap(_.positions)
    if (reached.exists { case (k, p) => p == ShardPosition.Ended && !start.shards.get(k).contains(p) })
      shardEnded = true
    val end = KinesisSourceOffset(start.shards ++ reached)
    placed = (placed ++ reports.collect { case r if r.location.nonEmpty => r.key -> r.location }).filter {
      case (k, _) => end.shards.get(k).exists(_ != ShardPosition.Ended)
    }
    noteLate(tasks, planned.slots)
    end
  }

  /**
   * Warns of tasks that started after the batch's end; when some did while others did not, in this batch and the
   * one before, fits the next batches to the tasks that started in time.
   */
  private def noteLate(tasks: Seq[KinesisPartitionOffset], appSlots: Int): Unit = {
    val late = tasks.filter(_.late)
    val short = late.nonEmpty && late.size < tasks.size
    val fit = if (short && shortBefore) Some(tasks.size - late.size) else None
    fit.foreach(n => fitted = Some((appSlots, n)))
    shortBefore = short
    if (late.nonEmpty) {
      val shards = late.flatMap(_.positions.keys).sorted.map(k => s"shard ${k.shardId} of stream '${k.stream}'")
      logWarning(KinesisErrors.realTimeTasksLate(late.size, tasks.size, shards, fit))
    }
  }

  /** The executors the query's tasks parked fetchers on. */
  def locations: Seq[String] = placed.values.toSeq.distinct
}

/**
 * A real-time batch's plan: the start Spark gave, that start as planned (what the tasks read from), the partitions,
 * and the application's task slots when it was planned.
 */
private final case class Planned(
    start: KinesisSourceOffset,
    from: KinesisSourceOffset,
    partitions: Array[InputPartition],
    slots: Int)
