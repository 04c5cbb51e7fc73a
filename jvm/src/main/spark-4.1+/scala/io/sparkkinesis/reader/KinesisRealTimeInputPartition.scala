package io.sparkkinesis.reader

import org.apache.spark.sql.connector.read.InputPartition

import io.sparkkinesis.aws.{AwsConnection, StreamRef}
import io.sparkkinesis.fetching.FetchSettings
import io.sparkkinesis.offsets.{ShardKey, ShardPosition}

/**
 * One long-running task of a real-time mode batch: its shards (`shardsPerTask` of them, or none for a task that
 * only waits out the batch) and where each is to be read from. No end: the task reads until the batch's time is up.
 * `endedBefore`: shards already read to their end that are parents of shards not ended (the other parent of a
 * merged shard), so that the task may go on into a child whose last parent it reads to the end. `closed`: shards
 * the driver's listing shows closed, read to their end by GetRecords whatever the fetch mode (see
 * `fetching.ShardFetchers`). `sourceId`: the query's, whose fetchers the executor keeps between batches
 * (`ShardSessions`); `retired`: the application's stopped queries, whose pooled fetchers the executor closes.
 * `location`: the executor the shards' tasks of the batch before ran on, where their fetchers are pooled, as a
 * preferred location (`executor_<host>_<executorId>`).
 */
private[sparkkinesis] final case class KinesisRealTimeInputPartition(
    shards: Seq[(ShardKey, ShardPosition)],
    streams: Map[String, StreamRef],
    connection: AwsConnection,
    fetch: FetchSettings,
    endedBefore: Set[ShardKey],
    closed: Set[ShardKey] = Set.empty,
    sourceId: String = "",
    retired: Seq[String] = Nil,
    location: Option[String] = None) extends InputPartition {
  override def preferredLocations(): Array[String] = location.toArray
}
