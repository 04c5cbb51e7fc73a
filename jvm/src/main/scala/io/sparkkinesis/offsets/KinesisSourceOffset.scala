package io.sparkkinesis.offsets

import org.apache.spark.sql.connector.read.streaming.Offset

/**
 * The source's offset: every known shard's position. Immutable; written to Spark's offset log as JSON through
 * [[OffsetJson]] (one versioned codec), so the exact range of every micro-batch is fixed before it runs.
 */
private[sparkkinesis] final case class KinesisSourceOffset(shards: Map[ShardKey, ShardPosition]) extends Offset {
  override def json(): String = OffsetJson.write(this)

  def updated(key: ShardKey, position: ShardPosition): KinesisSourceOffset =
    copy(shards = shards.updated(key, position))
}
