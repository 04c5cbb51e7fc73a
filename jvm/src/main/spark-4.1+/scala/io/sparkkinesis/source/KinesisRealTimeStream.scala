package io.sparkkinesis.source

import org.apache.spark.sql.connector.read.{InputPartition, PartitionReaderFactory}
import org.apache.spark.sql.connector.read.streaming.{Offset, PartitionOffset, ReadLimit, SupportsRealTimeMode}

import io.sparkkinesis.compat.SparkShim
import io.sparkkinesis.errors.KinesisErrors
import io.sparkkinesis.offsets.{KinesisSourceOffset, ShardKey, ShardPosition}
import io.sparkkinesis.reader.{
  KinesisPartitionOffset,
  KinesisRealTimeInputPartition,
  KinesisRealTimeReaderFactory,
  KinesisSchema
}

/**
 * The stream of a streaming read on Spark 4.1 and later: the micro-batch stream, which can also run in real-time
 * mode. Spark says so with [[prepareForRealTimeMode]] before the first batch; from then on each batch is a set of
 * long-running tasks, each reading its shards from the batch's start for the batch's duration and passing every
 * record on as it arrives ([[io.sparkkinesis.reader.KinesisRealTimePartitionReader]]). Nothing is prefetched and
 * no end is planned: when the tasks end, each reports how far it read, and [[mergeOffsets]] makes that the batch's
 * end offset, which Spark writes to its offset log and the next batch starts from.
 *
 * Shards: each batch lists the shards when a listing is due (`shardDiscoveryInterval`), or at once after a shard
 * ended in the batch before, and reads those it may (a child once its parents are read to their end). The due
 * listing is one the driver's listing thread took during the batch (`ShardTracker.listAhead`), so that a batch end
 * does not wait on ListShards. A task that reads a shard to its end goes on into the children it may read (see the
 * reader), so records of a split shard reach the sink within the batch, after every record of their parent; a
 * merged shard whose parents were read by two tasks is read from the next batch on.
 *
 * Fetchers outlive batches: a task parks each shard's fetcher in its executor's `reader.ShardSessions` when the
 * batch ends, and the next batch's task of the shard takes it there, so a steady query opens no shard iterator or
 * subscription at a batch's end. Stopping the query closes its pooled fetchers. For that, each shard's task is
 * placed on the executor its task of the batch before ran on ([[RealTimeGrouping]]), as its tasks report.
 *
 * Tasks: as many as the application has task slots at most ([[TaskSlots]]: the executors' cores), since a task
 * that gets its slot only after the batch's end reads nothing. A task that still starts too late says so, and the
 * driver warns with [KINESIS_REAL_TIME_TASKS_LATE] naming its shards. When some tasks start too late while others
 * start in time, in two batches in a row (other jobs of the application hold slots), the next batches run only as
 * many tasks as started in time, until the application's slots change or enough of them are free again when a batch
 * is planned (the other jobs ended). Once is not enough to tell: a new executor that is slow to start its first
 * tasks looks the same for a batch.
 */
private[sparkkinesis] final class KinesisRealTimeStream(options: SourceOptions, checkpointLocation: String)
  extends KinesisMicroBatchStream(options, checkpointLocation) with SupportsRealTimeMode {

  @volatile private var realTime = false

  /**
   * The running batch's plan: the start Spark gave, that start as planned (new shards added, expired ones dropped:
   * what the tasks read from, and what [[mergeOffsets]] builds the end on) and the partitions. Spark may plan a
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

  override def prepareForRealTimeMode(): Unit = {
    RealTimeMode.checkOptions(options)
    realTime = true
    listShardsAhead()
    logInfo(s"Reading ${options.streams.mkString(", ")} in real-time mode")
  }

  /** In real-time mode the end is known only when the batch ends: nothing to look at beforehand. */
  override def latestOffset(start: Offset, limit: ReadLimit): Offset =
    if (realTime) start else super.latestOffset(start, limit)

  override def planInputPartitions(start: Offset): Array[InputPartition] = {
    val begin = start.asInstanceOf[KinesisSourceOffset]
    plan.filter(_.start == begin).getOrElse {
      val (from, readable, endedParents) = shardsToRead(begin, listNow = shardEnded)
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
      val settings = readSettings
      // With nothing to read (every shard ended, the children not listed yet), one task waits out the batch, so an
      // empty batch does not follow another at once.
      val tasks = if (groups.isEmpty) Seq((Seq.empty[ShardKey], None)) else groups
      val partitions = tasks.map { case (keys, at) =>
        KinesisRealTimeInputPartition(keys.map(k => k -> from.shards(k)), options.streamsByName, options.connection,
          settings, endedParents, keys.filter(isClosed).toSet, sourceId, RetiredSources.recent, at): InputPartition
      }.toArray
      plan = Some(Planned(begin, from, partitions, appSlots))
      plan.get
    }.partitions
  }

  override def mergeOffsets(offsets: Array[PartitionOffset]): Offset = {
    val planned = plan.getOrElse(throw new IllegalStateException("mergeOffsets before planInputPartitions"))
    val start = planned.from
    plan = None
    val tasks = offsets.toSeq.map {
      case p: KinesisPartitionOffset => p
      case other => throw new IllegalArgumentException(s"not an offset of this source: $other")
    }
    val reports = tasks.flatMap(_.reports)
    recordBatchReports(reports)
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

  /** Where the query's shard sessions live: where its prefetch rounds ran, and where its real-time tasks parked. */
  override protected def sessionLocations: Seq[String] = (super.sessionLocations ++ placed.values).distinct

  override def createReaderFactory(): PartitionReaderFactory =
    if (realTime) KinesisRealTimeReaderFactory(KinesisSchema.of(options.dialect)) else super.createReaderFactory()

  override def toString: String =
    if (realTime) s"KinesisRealTimeStream(${options.streams.mkString(",")})" else super.toString
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
