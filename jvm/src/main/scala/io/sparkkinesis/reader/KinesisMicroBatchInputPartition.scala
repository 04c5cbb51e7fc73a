package io.sparkkinesis.reader

import org.apache.spark.sql.connector.read.InputPartition

import io.sparkkinesis.aws.{AwsConnection, StreamRef}
import io.sparkkinesis.fetching.FetchSettings
import io.sparkkinesis.offsets.{RecordPosition, ShardKey, ShardPosition}

/**
 * One shard's part of a micro-batch: the user records after `from` up to and including `to`, or to the end of the
 * shard when `to` is None (the batch's end offset has the shard `Ended`: it was closed, and read to its end).
 * `firstSequence`: the range's first record when `from` is not tied to one (see
 * [[io.sparkkinesis.fetching.RangeReader]]).
 */
private[sparkkinesis] final case class ShardRange(
    key: ShardKey,
    stream: StreamRef,
    from: ShardPosition,
    to: Option[RecordPosition],
    firstSequence: Option[String] = None)

/**
 * One task of a micro-batch: the ranges of one or more shards whose buffers live on the same executor (`location`),
 * read one after the other, each in order. Grouping keeps a batch's tasks within Spark's slots (see
 * `source/TaskSlots`): a task per shard would cost the scheduler more than reading a few records does.
 */
private[sparkkinesis] final case class KinesisMicroBatchInputPartition(
    sourceId: String,
    ranges: Seq[ShardRange],
    connection: AwsConnection,
    fetch: FetchSettings,
    location: Option[String]) extends InputPartition {
  override def preferredLocations(): Array[String] = location.toArray
}
