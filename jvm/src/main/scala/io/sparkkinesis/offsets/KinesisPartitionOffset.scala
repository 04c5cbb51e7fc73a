package io.sparkkinesis.offsets

import org.apache.spark.sql.connector.read.streaming.PartitionOffset

/**
 * How far one long-running task of a real-time mode batch read its shards: the position of each, after the last
 * record it handed to Spark (or where it was to begin, or `Ended`). The driver merges the tasks' offsets into the
 * batch's end offset, which Spark writes to its offset log when the batch ends.
 */
private[sparkkinesis] final case class KinesisPartitionOffset(positions: Map[ShardKey, ShardPosition])
  extends PartitionOffset
