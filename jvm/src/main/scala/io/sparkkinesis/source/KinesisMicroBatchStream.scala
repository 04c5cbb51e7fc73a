package io.sparkkinesis.source

import java.util.{Optional, UUID}

import scala.jdk.CollectionConverters._

import org.apache.spark.internal.Logging
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReaderFactory}
import org.apache.spark.sql.connector.read.streaming._

import io.sparkkinesis.aws.KinesisClients
import io.sparkkinesis.offsets.{KinesisSourceOffset, OffsetJson, ShardKey, ShardPosition}
import io.sparkkinesis.prefetch.{FetchRDD, FetchTaskSpec, PrefetchBuffers, ShardFetchRequest, ShardReport}
import io.sparkkinesis.reader.KinesisMicroBatchReaderFactory

/**
 * Driver side of a streaming read. Each `latestOffset` call runs a prefetch round (a small Spark job, see
 * [[FetchRDD]]) on the shards that are due: executors read ahead into their buffers and report how far each
 * shard can go within the read limits. The ends they report become the next offset, which Spark writes to its
 * offset log before the batch runs, so every batch's range is fixed on the driver and a re-run reads the same
 * records. Batch tasks are placed where the records are buffered and re-read from Kinesis when they are not.
 */
final class KinesisMicroBatchStream(options: SourceOptions, checkpointLocation: String)
  extends MicroBatchStream with SupportsTriggerAvailableNow with ReportsSourceMetrics with Logging {

  private val sourceId = UUID.randomUUID().toString
  private val client = KinesisClients.sync(options.connection)
  private val tracker = new ShardTracker(client, options.streams, options.shardDiscoveryMillis,
    options.fetch.failOnDataLoss)
  private val streamsByName = options.streams.map(s => s.name -> s).toMap
  private val metrics = new SourceMetrics

  /** Per shard: the last report, where its buffer lives and when it may be read again. */
  private var reports = Map.empty[ShardKey, ShardReport]
  /** Trigger.AvailableNow: read what had arrived by this time, then stop. */
  private var availableNowCutoff: Option[Long] = None

  override def initialOffset(): Offset = {
    val spark = SparkSession.active
    new InitialOffsetStore(checkpointLocation, spark.sparkContext.hadoopConfiguration).getOrCreate {
      val start = options.initialPosition.getOrElse(StartPosition.Latest) match {
        // `latest` is pinned to the time the query first started, so a restart before the first commit
        // reads everything written since then.
        case StartPosition.Latest => StartPosition.AtTimestamp(System.currentTimeMillis())
        case other => other
      }
      val listed = tracker.list().keySet
      options.shardStarts.checkKnown(listed)
      KinesisSourceOffset(listed.map { k =>
        k -> (ShardPosition.NotStarted(options.shardStarts.get(k).getOrElse(start)): ShardPosition)
      }.toMap)
    }
  }

  override def deserializeOffset(json: String): Offset = OffsetJson.read(json)

  override def getDefaultReadLimit: ReadLimit = options.maxRecordsPerTrigger match {
    case Some(n) => ReadLimit.maxRows(n)
    case None => ReadLimit.allAvailable()
  }

  override def prepareForTriggerAvailableNow(): Unit = availableNowCutoff = Some(System.currentTimeMillis())

  override def latestOffset(): Offset = throw new UnsupportedOperationException("latestOffset(start, limit) is used")

  override def latestOffset(start: Offset, limit: ReadLimit): Offset = {
    val from = tracker.refresh(start.asInstanceOf[KinesisSourceOffset], System.currentTimeMillis())
    var result = from
    while (result eq from) {
      val due = dueShards(from)
      if (due.nonEmpty) result = prefetch(from, due, limit)
      if ((result eq from) || result == from) {
        result = from
        // Without AvailableNow, "nothing new" is an answer. With it, an answer of "nothing" ends the query, so
        // wait for the shards that may still hold records from before the cutoff.
        if (availableNowCutoff.isEmpty || availableNowDone(from)) return from
        val wait = tracker.readable(from).flatMap(reports.get).map(_.nextDueMillis).minOption
          .map(_ - System.currentTimeMillis()).getOrElse(0L)
        Thread.sleep(math.max(10L, math.min(wait, 1000L)))
      }
    }
    result
  }

  /** Shards to visit in this round: due for a call, or with records buffered beyond the last planned end. */
  private def dueShards(offset: KinesisSourceOffset): Seq[ShardKey] = {
    val now = System.currentTimeMillis()
    tracker.readable(offset).filter { k =>
      reports.get(k) match {
        case None => true
        case Some(_) if availableNowCutoff.isDefined && finishedForAvailableNow(offset, k) => false
        case Some(r) => r.nextDueMillis <= now || r.bufferedRecords > 0 || r.end != offset.shards(k)
      }
    }
  }

  /** With AvailableNow: everything that had arrived by the cutoff is planned for this shard. */
  private def finishedForAvailableNow(offset: KinesisSourceOffset, k: ShardKey): Boolean =
    reports.get(k).exists { r =>
      r.end == offset.shards(k) && (r.pastCutoff || (r.caughtUp && r.bufferedRecords == 0))
    }

  private def availableNowDone(offset: KinesisSourceOffset): Boolean =
    tracker.readable(offset).forall(finishedForAvailableNow(offset, _))

  private def prefetch(from: KinesisSourceOffset, due: Seq[ShardKey], limit: ReadLimit): KinesisSourceOffset = {
    val recordBudgets = share(limitRows(limit), due.size)
    val byteBudgets = share(options.maxBytesPerTrigger, due.size)
    rounds += 1
    val requests = due.zipWithIndex.map { case (k, i) =>
      ShardFetchRequest(k, streamsByName(k.stream), from.shards(k), recordBudgets(i), byteBudgets(i))
    }
    val byKey = requests.map(r => r.key -> r).toMap
    val groups = ShardGrouping.group(requests.map(_.key), options.shardsPerTask,
      (k: ShardKey) => reports.get(k).map(_.location), (k: ShardKey) => reports.get(k).map(_.bytes).getOrElse(0L))
    val specs = groups.map { keys =>
      FetchTaskSpec(sourceId, keys.map(byKey), options.connection, options.fetch, availableNowCutoff,
        reports.get(keys.head).map(_.location))
    }
    val sc = SparkSession.active.sparkContext
    val rdd = new FetchRDD(sc, specs)
    val results = sc.runJob(rdd, (it: Iterator[ShardReport]) => it.toArray)
    val fresh = results.flatten
    fresh.foreach(r => reports = reports.updated(r.key, r))
    metrics.record(fresh.toSeq)
    fresh.foldLeft(from)((o, r) => if (r.end != o.shards(r.key)) o.updated(r.key, r.end) else o)
  }

  /** Count of prefetch rounds so far; rotates which shards get the remainder of a budget. */
  private var rounds = 0L

  /**
   * A per-trigger budget split over `n` shards so that the parts add up to exactly the budget: each gets the
   * floor, and the remainder goes one by one to shards chosen in turn from round to round.
   */
  private def share(budget: Option[Long], n: Int): IndexedSeq[Long] = budget match {
    case None => IndexedSeq.fill(n)(Long.MaxValue)
    case Some(total) =>
      val base = total / n
      val extra = total % n
      val offset = (rounds % n).toInt
      (0 until n).map(i => base + (if (((i - offset + n) % n) < extra) 1L else 0L))
  }

  private def limitRows(limit: ReadLimit): Option[Long] = limit match {
    case m: ReadMaxRows => Some(m.maxRows())
    case c: CompositeReadLimit => c.getReadLimits.collect { case m: ReadMaxRows => m.maxRows() }.minOption
    case _ => None
  }

  override def planInputPartitions(start: Offset, end: Offset): Array[InputPartition] = {
    val s = start.asInstanceOf[KinesisSourceOffset]
    val e = end.asInstanceOf[KinesisSourceOffset]
    e.shards.toSeq.sortBy(_._1).collect {
      case (k, ShardPosition.After(to)) if !s.shards.get(k).contains(ShardPosition.After(to)) =>
        val fromPos = s.shards.getOrElse(k, ShardPosition.NotStarted(StartPosition.TrimHorizon))
        KinesisMicroBatchInputPartition(sourceId, k, streamsByName(k.stream), fromPos, to, options.connection,
          options.fetch, reports.get(k).map(_.location)): InputPartition
    }.toArray
  }

  override def createReaderFactory(): PartitionReaderFactory = KinesisMicroBatchReaderFactory

  override def commit(end: Offset): Unit = ()

  override def stop(): Unit = PrefetchBuffers.dropSource(sourceId)

  override def metrics(latestConsumedOffset: Optional[Offset]): java.util.Map[String, String] =
    metrics.snapshot(latestConsumedOffset.toScala.collect { case o: KinesisSourceOffset => o }, tracker.lostShards).asJava

  override def toString: String = s"KinesisMicroBatchStream(${options.streams.mkString(",")})"

  private implicit class OptionalOps[T](o: Optional[T]) {
    def toScala: Option[T] = if (o.isPresent) Some(o.get()) else None
  }
}
