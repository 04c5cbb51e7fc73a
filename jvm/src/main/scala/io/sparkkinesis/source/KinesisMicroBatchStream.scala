package io.sparkkinesis.source

import java.util.{Optional, UUID}

import io.sparkkinesis.compat.CollectionConverters._

import org.apache.spark.internal.Logging
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReaderFactory}
import org.apache.spark.sql.connector.read.streaming._

import io.sparkkinesis.aws.{KinesisClients, RetryPolicy, StreamConsumer, StreamConsumers}
import io.sparkkinesis.fetching.{FetchSettings, ShardReading}
import io.sparkkinesis.errors.KinesisErrors
import io.sparkkinesis.metrics.QueryMetricsRegistry
import io.sparkkinesis.offsets.{KinesisSourceOffset, ShardKey, ShardPosition, StartPosition}
import io.sparkkinesis.reader.{
  KinesisMicroBatchInputPartition,
  KinesisMicroBatchReaderFactory,
  KinesisSchema,
  ShardRange
}
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
  extends MicroBatchStream with SupportsTriggerAvailableNow with ReportsSourceMetrics with Logging {

  private[source] val sourceId = UUID.randomUUID().toString
  private val tracker =
    new ShardTracker(() => KinesisClients.sync(options.connection), options.streams, options.shardDiscoveryMillis,
      options.fetch.failOnDataLoss, RetryPolicy.Default.on(options.connection))

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
  private[source] val readSettings: FetchSettings =
    options.fetch.copy(consumers = consumers.map(c => c.stream -> c.arn).toMap)

  private val planner = new PrefetchPlanner(sourceId, options, tracker.isClosed, readSettings, () => slots())

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

  override def latestOffset(start: Offset, limit: ReadLimit): Offset = {
    val from = start.asInstanceOf[KinesisSourceOffset]
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

  /**
   * `start` (from the offset log) brought in step with the streams `streamName` names and with the shard listing
   * (a listing is made when one is due, or when `listNow`), the shards of it that may be read now, and its ended
   * shards that are parents of shards not ended: for real-time mode, whose batches read from a start with no planned
   * end.
   */
  private[source] def shardsToRead(
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
  private[source] def isClosed(key: ShardKey): Boolean = tracker.isClosed(key)

  /** What a real-time batch's tasks reported of their shards, for [[metrics]]. */
  private[source] def recordBatchReports(readings: Seq[ShardReading]): Unit = metrics.accumulate(readings)

  /** Whether the query runs under Trigger.Once (Spark asked for everything available), for messages. */
  private var once = false

  /**
   * The next offset after `start` within the budgets: a prefetch round on the shards that are due. Under
   * AvailableNow or Once it waits for the shards that may still hold records from before the cutoff, at most
   * `stallTimeout` without any of them moving: then the query fails with [KINESIS_READ_STALLED] naming them.
   */
  private def next(start: KinesisSourceOffset, rows: Option[Long], bytes: Option[Long]): KinesisSourceOffset = {
    val from = inStep(start)
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
    KinesisMicroBatchReaderFactory(KinesisSchema.of(options.dialect), Some(rangeLoss))

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
