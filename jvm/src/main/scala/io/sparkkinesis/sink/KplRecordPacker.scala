package io.sparkkinesis.sink

import scala.collection.mutable

import io.sparkkinesis.aws.RetryPolicy
import io.sparkkinesis.kpl.{Aggregate, KplAggregator, UserRecord}
import software.amazon.awssdk.services.kinesis.KinesisAsyncClient

/**
 * `aggregation=kpl`: packs a writer's records into KPL aggregates, one aggregate in progress per target shard,
 * so that every user record of an aggregate belongs to the shard the aggregate lands on (consumers such as
 * the KCL drop sub-records outside the shard's hash range). Shards are found from the stream's open shards
 * ([[ShardMap.forStream]]: listed once per executor and stream every 30 s). A record too large for an aggregate
 * is sent on its own, after the open aggregate of its shard. An aggregate leaves when the next record would push
 * it over `maxAggregateBytes` of its stream (`aggregationMaxSize`, never above the stream's record limit), when the
 * held aggregates together pass `maxHeldBytes` (the largest leaves), and at the end of the task.
 */
private[sink] final class KplRecordPacker(
    client: KinesisAsyncClient,
    streams: SinkStreams,
    maxAggregateBytes: Int => Long,
    maxHeldBytes: Long,
    listing: RetryPolicy = RetryPolicy.Default) {

  private val shardMaps = mutable.HashMap.empty[Int, ShardMap]
  // Per (stream, shard): the aggregator and the position of the aggregate's first row.
  private val open = mutable.LinkedHashMap.empty[(Int, String), (KplAggregator, Array[String])]

  /** Adds one row's record; returns the aggregates it completed. */
  def add(
      stream: Int,
      partitionKey: String,
      explicitHashKey: String,
      data: Array[Byte],
      position: String): Seq[PutEntry] = {
    val map = shardMaps.getOrElseUpdate(stream, ShardMap.forStream(client, streams(stream), listing))
    val shard = map.shardOf(ShardMap.hashKey(partitionKey, explicitHashKey))
    val bytes = SinkSchema.recordBytes(partitionKey, data)
    val maxBytes = maxAggregateBytes(stream)
    if (bytes > maxBytes) {
      // Too large for any aggregate, yet a valid record (the writer checked maxRecordSize): the shard's open
      // aggregate leaves first, then this record on its own, under the shard's ordering key, so order is kept.
      val before = open.remove((stream, shard)).toSeq.flatMap { case (aggregator, first) =>
        aggregator.flush().map(entry(stream, shard, _, first(0)))
      }
      return before :+ new PutEntry(stream, partitionKey, explicitHashKey, data, bytes, orderingKey(shard), 1, position)
    }
    val (aggregator, first) =
      open.getOrElseUpdate((stream, shard), (new KplAggregator(maxBytes), Array[String](null)))
    val done = aggregator.add(UserRecord(partitionKey, Option(explicitHashKey), data))
    val out = done.map(entry(stream, shard, _, first(0))).toSeq
    if (aggregator.pendingRecords == 1 || done.isDefined) first(0) = position
    out ++ (if (heldBytes > maxHeldBytes) flushLargest() else Nil)
  }

  /** Every aggregate in progress. */
  def flush(): Seq[PutEntry] = {
    val out = open.iterator.flatMap { case ((stream, shard), (aggregator, first)) =>
      aggregator.flush().map(entry(stream, shard, _, first(0)))
    }.toVector
    open.clear()
    out
  }

  private def heldBytes: Long = open.valuesIterator.map(_._1.pendingBytes).sum

  private def flushLargest(): Seq[PutEntry] = {
    val ((stream, shard), (aggregator, first)) = open.maxBy(_._2._1.pendingBytes)
    open -= ((stream, shard))
    aggregator.flush().map(entry(stream, shard, _, first(0))).toSeq
  }

  private def entry(stream: Int, shard: String, a: Aggregate, position: String): PutEntry =
    new PutEntry(stream, a.partitionKey, a.explicitHashKey.orNull, a.bytes, a.sizeBytes, orderingKey(shard),
      a.count, s"the aggregate of ${a.count} record(s) starting at $position")

  /** Everything sent to one shard shares an ordering key, so `ordering=perKey` keeps the shard's order. */
  private def orderingKey(shard: String): String = s"shard:$shard"
}
