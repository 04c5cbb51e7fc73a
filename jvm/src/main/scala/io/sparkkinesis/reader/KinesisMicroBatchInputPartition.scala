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
private[sparkkinesis] final case class KinesisMicroBatchInputPartition(
    sourceId: String,
    key: ShardKey,
    stream: StreamRef,
    from: ShardPosition,
    to: Option[RecordPosition],
    connection: AwsConnection,
    fetch: FetchSettings,
    location: Option[String],
    firstSequence: Option[String] = None) extends InputPartition {
  override def preferredLocations(): Array[String] = location.toArray
}
