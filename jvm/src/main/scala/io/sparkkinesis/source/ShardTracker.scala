package io.sparkkinesis.source

import io.sparkkinesis.aws.StreamRef
import io.sparkkinesis.offsets.{KinesisSourceOffset, ShardKey, ShardPosition}
import software.amazon.awssdk.services.kinesis.KinesisClient

/**
 * Driver-side shard discovery and lineage. Lists the shards of every stream at most every `intervalMillis`,
 * adds new shards to the offset (reading from their trim horizon), and says which shards may be read now: a
 * child only once each parent it has in the offset has been read to its end in an offset already in Spark's
 * offset log, so per partition key order holds across splits and merges.
 */
final class ShardTracker(client: KinesisClient, streams: Seq[StreamRef], intervalMillis: Long) {
  private var lastListing = 0L
  private var parents = Map.empty[ShardKey, Seq[ShardKey]]

  def list(): Map[ShardKey, ShardDescription] = {
    val shards = streams.flatMap { s =>
      ShardLister.list(client, s).map(d => ShardKey(s.name, d.shardId) -> d)
    }.toMap
    parents = shards.map { case (k, d) => k -> d.parents.map(p => ShardKey(k.stream, p)) }
    lastListing = System.currentTimeMillis()
    shards
  }

  /** `offset` plus any shard that appeared since, when a listing is due. */
  def withNewShards(offset: KinesisSourceOffset, now: Long): KinesisSourceOffset =
    if (now - lastListing < intervalMillis) offset
    else {
      val fresh = list().keys.filterNot(offset.shards.contains)
      fresh.foldLeft(offset)((o, k) => o.updated(k, ShardPosition.NotStarted(StartPosition.TrimHorizon)))
    }

  /** Shards of `offset` that may be read now (not ended, and every known parent ended in `offset`). */
  def readable(offset: KinesisSourceOffset): Seq[ShardKey] =
    offset.shards.toSeq.collect {
      case (k, p) if p != ShardPosition.Ended &&
        parents.getOrElse(k, Nil).forall(parent => offset.shards.get(parent).forall(_ == ShardPosition.Ended)) => k
    }.sorted
}
