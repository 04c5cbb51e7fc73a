package io.sparkkinesis.reader

import org.apache.spark.sql.connector.read.InputPartition

import io.sparkkinesis.aws.{AwsConnection, StreamRef}
import io.sparkkinesis.fetching.FetchSettings
import io.sparkkinesis.offsets.{RecordPosition, ShardKey, ShardPosition}

/** One shard's part of a micro-batch: the user records after `from` up to and including `to`. */
private[sparkkinesis] final case class KinesisMicroBatchInputPartition(
    sourceId: String,
    key: ShardKey,
    stream: StreamRef,
    from: ShardPosition,
    to: RecordPosition,
    connection: AwsConnection,
    fetch: FetchSettings,
    location: Option[String]) extends InputPartition {
  override def preferredLocations(): Array[String] = location.toArray
}
