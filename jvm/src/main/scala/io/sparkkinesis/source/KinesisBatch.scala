package io.sparkkinesis.source

import org.apache.spark.sql.connector.read.{Batch, InputPartition, PartitionReaderFactory}

import io.sparkkinesis.aws.{AwsConnection, KinesisClients, StreamRef}
import io.sparkkinesis.offsets.ShardKey
import io.sparkkinesis.reader.KinesisBatchReaderFactory

/** One shard to read in a batch query, and where reading it starts. */
final case class BatchShard(stream: StreamRef, shardId: String, start: StartPosition)

/**
 * A batch read: every shard of every stream, from `start` (or its `initialShardPositions` entry) up to the records that had arrived when the query
 * was planned (`asOfMillis`). A retried task reads the same records again.
 */
final case class KinesisBatchInputPartition(
    shards: Seq[BatchShard],
    asOfMillis: Long,
    connection: AwsConnection,
    fetch: FetchConfig) extends InputPartition

/** Driver-side planning of a batch read: lists shards and groups them into Spark partitions. */
final class KinesisBatch(options: SourceOptions, start: StartPosition, asOfMillis: Long) extends Batch {

  override def planInputPartitions(): Array[InputPartition] = {
    val client = KinesisClients.sync(options.connection)
    val listed = options.streams.flatMap { stream =>
      ShardLister.list(client, stream).sortBy(_.shardId).map(s => stream -> ShardKey(stream.name, s.shardId))
    }
    options.shardStarts.checkKnown(listed.map(_._2).toSet)
    val shards = listed.map { case (stream, key) =>
      BatchShard(stream, key.shardId, options.shardStarts.get(key).getOrElse(start))
    }
    shards.grouped(options.shardsPerTask).map { group =>
      KinesisBatchInputPartition(group, asOfMillis, options.connection, options.fetch): InputPartition
    }.toArray
  }

  override def createReaderFactory(): PartitionReaderFactory = KinesisBatchReaderFactory
}
