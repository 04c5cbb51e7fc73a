package io.sparkkinesis.source

import org.apache.spark.sql.connector.read.{InputPartition, PartitionReaderFactory}
import org.apache.spark.sql.connector.read.streaming.{Offset, PartitionOffset, ReadLimit, SupportsRealTimeMode}

import io.sparkkinesis.offsets.KinesisSourceOffset
import io.sparkkinesis.reader.KinesisRealTimeReaderFactory

/**
 * The stream of a streaming read on Spark 4.1 and later: the micro-batch stream, which can also run in real-time
 * mode. Spark says so with [[prepareForRealTimeMode]] before the first batch; from then on each batch is a set of
 * long-running tasks, each reading its shards from the batch's start for the batch's duration and passing every
 * record on as it arrives ([[io.sparkkinesis.reader.KinesisRealTimePartitionReader]]). Nothing is prefetched and
 * no end is planned: when the tasks end, each reports how far it read, and [[mergeOffsets]] ([[RealTimePlan]]) makes that the batch's
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

  /** The real-time batches' plan, made through this stream's [[StreamView]]. */
  private val plan = new RealTimePlan(options, this)

  override def prepareForRealTimeMode(): Unit = {
    RealTimeMode.checkOptions(options)
    realTime = true
    listShardsAhead()
    logInfo(s"Reading ${options.streams.mkString(", ")} in real-time mode")
  }

  /** In real-time mode the end is known only when the batch ends: nothing to look at beforehand. */
  override def latestOffset(start: Offset, limit: ReadLimit): Offset =
    if (realTime) start else super.latestOffset(start, limit)

  override def planInputPartitions(start: Offset): Array[InputPartition] =
    plan.partitions(start.asInstanceOf[KinesisSourceOffset])

  override def mergeOffsets(offsets: Array[PartitionOffset]): Offset = plan.merge(offsets)

  /** Where the query's shard sessions live: where its prefetch rounds ran, and where its real-time tasks parked. */
  override protected def sessionLocations: Seq[String] = (super.sessionLocations ++ plan.locations).distinct

  override def createReaderFactory(): PartitionReaderFactory =
    if (realTime) KinesisRealTimeReaderFactory(options.columns) else super.createReaderFactory()

  override def toString: String =
    if (realTime) s"KinesisRealTimeStream(${options.streams.mkString(",")})" else super.toString
}
