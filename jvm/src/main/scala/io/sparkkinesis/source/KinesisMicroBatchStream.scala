package io.sparkkinesis.source

import java.util.{Optional, UUID}

import io.sparkkinesis.compat.CollectionConverters._

import org.apache.spark.internal.Logging
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReaderFactory}
import org.apache.spark.sql.connector.read.streaming._

import io.sparkkinesis.aws.{KinesisClients, RetryPolicy, StreamConsumer, StreamConsumers}
import io.sparkkinesis.fetching.{FetchSettings, ReadMode, ShardReading}
import io.sparkkinesis.errors.KinesisErrors
import io.sparkkinesis.metrics.QueryMetricsRegistry
import io.sparkkinesis.offsets.{KinesisSourceOffset, ShardKey, ShardPosition, StartPosition}
import io.sparkkinesis.reader.{KinesisMicroBatchInputPartition, KinesisMicroBatchReaderFactory, ShardRange}
import io.sparkkinesis.compat.ScalaCompat._

/**
 * Driver side of a streaming read: Spark's protocol and the offsets, nothing else. Each `latestOffset` call runs a
 * prefetch round (planned by [[PrefetchPlanner]], run as a small Spark job by [[PrefetchJob]]) on the shards that
 * are due: executors read ahead into their buffers and report how far each shard can go within the read limits.
 * The ends they report become the next offset, which Spark writes to its offset log before the batch runs, so
 * every batch's range is fixed on the driver and a re-run reads the same records. Batch tasks are placed where
 * the records are buffered and re-read from Kinesis when they are not.
 */
private[sparkkinesis] class KinesisMicroBatchStream(
    options: SourceOptions,
    checkpointLocation: String,
    prefetchJob: PrefetchJob = SparkPrefetchJob,
    quietAfterMillis: Long = QuietWatch.QuietAfterMillis)
  extends MicroBatchStream with SupportsTriggerAvailableNow with ReportsSourceMetrics with StreamView with Logging {

  val sourceId: String = UUID.randomUUID().toString
  private val tracker = {
    val service = options.fetch.service
    new ShardTracker(service.list(options.connection, _, _), options.streams, options.shardDiscoveryMillis,
      options.fetch.failOnDataLoss, RetryPolicy.Default.on(options.connection),
      if (service.findsChildren) Some(service.children(options.connection, _, _, _)) else None)
  }

  /** Spark's task slots, which bound the tasks of a round and of a batch (overridden by tests). */
  protected def slots(): Int = TaskSlots.current
  private val metrics = new SourceMetrics
  private val quietWatch = new QuietWatch(options, quietAfterMillis)

  /**
   * The enhanced fan-out consumers the query reads with (`consumerMode=efo`): the stream's first step, when the query
   * starts, looks each one up (or registers it) and waits until it is ACTIVE, within
   * `StreamConsumers.ActiveTimeoutMillis`, or fails the query naming the consumer ([[StreamConsumers.acquire]]).
   * None with polling.
   */
  private val consumers: Seq[StreamConsumer] = options.consumer.fold(Seq.empty[StreamConsumer]) { spec =>
    val acquired = StreamConsumers.acquire(options.connection, options.streams, spec,
      StreamConsumers.defaultName(checkpointLocation))
    logInfo(s"Reading by enhanced fan-out as ${acquired.map(c => s"${c.name} (${c.stream})").mkString(", ")}")
    acquired
  }

  /**
   * How prefetch rounds and real-time tasks read: by the consumer of each stream with `consumerMode=efo`; re-reads
   * of planned ranges and the driver's own looks at quiet shards keep to GetRecords.
   */
  val readSettings: FetchSettings =
    if (consumers.isEmpty) options.fetch
    else options.fetch.copy(mode = ReadMode.FanOut(consumers.map(c => c.stream -> c.arn).toMap))

  private val planner = new PrefetchPlanner(sourceId, options, tracker.isClosed, readSettings, () => slots())

  /** The prefetch rounds `latestOffset` runs. */
  private val rounds = new PrefetchRounds(options, planner, tracker, quietWatch, metrics, prefetchJob, inStep(_, _))

  /** Losses batch tasks met re-reading planned ranges from Kinesis (failOnDataLoss=false), for `dataLoss`. */
  private lazy val rangeLoss = SparkSession.active.sparkContext.longAccumulator("kinesis data loss in re-read ranges")

  /** Where the query and the streams new to it start ([[StreamStarts]]). */
  private val starts = new StreamStarts(options, checkpointLocation, tracker)

  /**
   * The query's metrics outside Spark's progress: gauges in Spark's metrics system, and CloudWatch with
   * `cloudWatchMetrics=true` ([[QueryMetricsRegistry]]); the run they belong to, None outside a streaming query.
   */
  private val metricsRun: Option[String] = QueryMetricsRegistry.attachSource(SparkSession.active.sparkContext,
    options.streams.map(_.name), () => metrics.byStream(options.streams.map(_.name)), options.cloudWatch)

  override def initialOffset(): Offset = starts.first

  /** An entry of the offset log, this connector's or the awslabs connector's ([[LoggedOffsets]]). */
  override def deserializeOffset(json: String): Offset = loggedOffsets.read(json, tracker.list())

  private val loggedOffsets =
    new LoggedOffsets(checkpointLocation, SparkSession.active.sparkContext.hadoopConfiguration)

  /**
   * `maxRecordsPerTrigger`, or no limit written as the largest row count rather than `allAvailable`: Spark passes
   * `allAvailable` only under Trigger.Once then, which is how [[latestOffset]] knows to read everything at once.
   */
  override def getDefaultReadLimit: ReadLimit = ReadLimit.maxRows(options.maxRecordsPerTrigger.getOrElse(Long.MaxValue))

  override def prepareForTriggerAvailableNow(): Unit = planner.startAvailableNow(System.currentTimeMillis())

  override def latestOffset(): Offset = throw new UnsupportedOperationException("latestOffset(start, limit) is used")

  override def latestOffset(start: Offset, limit: ReadLimit): Offset =
    rounds.latest(start.asInstanceOf[KinesisSourceOffset], limit)

  /**
   * `start` (from the offset log) brought in step with the streams `streamName` names and with the shard listing
   * (a listing is made when one is due, or when `listNow`), the shards of it that may be read now, and its ended
   * shards that are parents of shards not ended: for real-time mode, whose batches read from a start with no planned
   * end.
   */
  def shardsToRead(
      start: KinesisSourceOffset,
      listNow: Boolean): (KinesisSourceOffset, Seq[ShardKey], Set[ShardKey]) = {
    val from = inStep(start, listNow)
    (from, tracker.readable(from), tracker.endedParents(from))
  }

  /**
   * `start` with the streams `streamName` names and the shard listing (listed when a listing is due, or when
   * `listNow`), the driver's state of shards that left it dropped.
   */
  private def inStep(start: KinesisSourceOffset, listNow: Boolean = false): KinesisSourceOffset = {
    val from = tracker.refresh(starts.withNamedStreams(start), System.currentTimeMillis(), force = listNow)
    forgetGone(from)
    from
  }

  /** The shards of the last offset planned from, whose driver state is kept. */
  private var known = Set.empty[ShardKey]

  /** Drops the driver's state of shards that left the offset (the planner's reports, metrics, the quiet watch). */
  private def forgetGone(offset: KinesisSourceOffset): Unit = {
    val gone = known -- offset.shards.keySet
    if (gone.nonEmpty) {
      planner.forget(gone)
      metrics.forget(gone)
      quietWatch.forget(gone)
    }
    known = offset.shards.keySet
  }

  /** Lists shards ahead of the plans from now on, off the planning thread ([[ShardTracker.listAhead]]). */
  private[source] def listShardsAhead(): Unit = tracker.listAhead()

  /** Whether the last shard listing shows the shard closed (read by GetRecords to its end in every mode). */
  def isClosed(key: ShardKey): Boolean = tracker.isClosed(key)

  /** What a real-time batch's tasks reported of their shards, for [[metrics]]. */
  def recordBatchReports(readings: Seq[ShardReading]): Unit = metrics.accumulate(readings)

  override def planInputPartitions(start: Offset, end: Offset): Array[InputPartition] = {
    val s = start.asInstanceOf[KinesisSourceOffset]
    val e = end.asInstanceOf[KinesisSourceOffset]
    starts.checkNoStreamRemoved(e)
    val ranges = e.shards.toSeq.sortBy(_._1).flatMap { case (k, to) =>
      val fromPos = s.shards.getOrElse(k, ShardPosition.NotStarted(StartPosition.TrimHorizon))
      to match {
        case ShardPosition.After(last) if fromPos != to => Some((k, fromPos, Some(last)))
        // Closed within the batch: read to the shard's end, unless the round that ended it found nothing there.
        case ShardPosition.Ended if fromPos != to && !planner.emptyToEnd(k, fromPos) => Some((k, fromPos, None))
        case _ => None
      }
    }
    val planned = ranges.map { case (k, fromPos, last) =>
      val first = if (ShardPosition.startsUntied(fromPos)) e.firsts.get(k) else None
      k -> ShardRange(k, options.streamsByName(k.stream), fromPos, last, first)
    }.toMap
    // Shards whose buffers share an executor share tasks, no more tasks than Spark has slots (TaskSlots). A shard
    // and its children in one batch (Trigger.Once reads a reshard whole) go to one task, parents first, so that each
    // key's records come in order.
    val families = Lineage.families(planned.keys.toSeq, tracker.parentsOf)
    val perTask = TaskSlots.shardsPerTask(families.size, options.shardsPerTask, slots())
    ShardGrouping.group(families.keys.toSeq, perTask, planner.location,
      (root: ShardKey) => families(root).map(planner.load).sum).map { roots =>
      KinesisMicroBatchInputPartition(sourceId, roots.flatMap(families).map(planned), options.connection,
        options.fetch, planner.location(roots.head)): InputPartition
    }.toArray
  }

  override def createReaderFactory(): PartitionReaderFactory =
    KinesisMicroBatchReaderFactory(options.columns, Some(rangeLoss))

  override def commit(end: Offset): Unit = ()

  /** The executors where the query keeps shard sessions (`reader.ShardSessions`), freed when it stops. */
  protected def sessionLocations: Seq[String] = planner.locations

  override def stop(): Unit = {
    tracker.stopListingAhead()
    metricsRun.foreach(QueryMetricsRegistry.detach)
    quietWatch.close()
    prefetchJob.release(sourceId, sessionLocations)
    options.consumer.foreach(spec => StreamConsumers.release(options.connection, consumers, spec))
    KinesisClients.retire(options.connection)
  }

  override def metrics(latestConsumedOffset: Optional[Offset]): java.util.Map[String, String] =
    metrics.snapshot(latestConsumedOffset.toScala.collect { case o: KinesisSourceOffset => o },
      tracker.lostShards + rangeLoss.value, quietWatch.calls, quietWatch.watching, consumers.map(_.name),
      options.streams.size).asJava

  override def toString: String = s"KinesisMicroBatchStream(${options.streams.mkString(",")})"

  private implicit class OptionalOps[T](o: Optional[T]) {
    def toScala: Option[T] = if (o.isPresent) Some(o.get()) else None
  }
}
