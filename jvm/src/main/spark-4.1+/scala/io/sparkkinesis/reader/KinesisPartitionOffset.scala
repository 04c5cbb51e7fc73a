package io.sparkkinesis.reader

import org.apache.spark.sql.connector.read.streaming.PartitionOffset

import io.sparkkinesis.offsets.{ShardKey, ShardPosition}
import io.sparkkinesis.fetching.ShardReading

/**
 * How far one long-running task of a real-time mode batch read its shards: the position of each, after the last
 * record it handed to Spark (or where it was to begin, or `Ended`). The driver merges the tasks' offsets into the
 * batch's end offset, which Spark writes to its offset log when the batch ends. `reports`: what the task saw of each
 * shard (how far behind the tip its last read was, the calls made in this batch), for the source's metrics; never
 * written to the offset log. `late`: the task got its task slot only after the batch's end, so it read nothing.
 */
private[sparkkinesis] final case class KinesisPartitionOffset(
    positions: Map[ShardKey, ShardPosition],
    reports: Seq[ShardReading] = Nil,
    late: Boolean = false) extends PartitionOffset
