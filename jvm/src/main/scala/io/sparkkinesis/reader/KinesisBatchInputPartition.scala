package io.sparkkinesis.reader

import org.apache.spark.sql.connector.read.InputPartition

import io.sparkkinesis.aws.{AwsConnection, StreamRef}
import io.sparkkinesis.fetching.FetchSettings
import io.sparkkinesis.offsets.StartPosition

/** One shard to read in a batch query, and where reading it starts. */
private[sparkkinesis] final case class BatchShard(stream: StreamRef, shardId: String, start: StartPosition)

/**
 * A batch read's task: its shards, each from its start up to the records that had arrived when the query was
 * planned (`asOfMillis`). A retried task reads the same records again.
 */
private[sparkkinesis] final case class KinesisBatchInputPartition(
    shards: Seq[BatchShard],
    asOfMillis: Long,
    connection: AwsConnection,
    fetch: FetchSettings) extends InputPartition
