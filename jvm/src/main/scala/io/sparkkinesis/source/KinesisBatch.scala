package io.sparkkinesis.source

import org.apache.spark.sql.connector.read.{Batch, InputPartition, PartitionReaderFactory}

import io.sparkkinesis.aws.RetryPolicy
import io.sparkkinesis.offsets.{ShardKey, StartPosition}
import io.sparkkinesis.reader.{BatchShard, KinesisBatchInputPartition, KinesisBatchReaderFactory}

/**
 * Driver-side planning of a batch read: lists every shard of every stream and groups them into Spark partitions.
 * Each shard is read from `start` (or its `initialShardPositions` entry) up to the records that had arrived when
 * the query was planned (`asOfMillis`).
 */
private[sparkkinesis] final class KinesisBatch(options: SourceOptions, start: StartPosition, asOfMillis: Long)
  extends Batch {

  override def planInputPartitions(): Array[InputPartition] = {
    val listed = options.streams.flatMap { stream =>
      options.fetch.service.list(options.connection, stream, RetryPolicy.Default.on(options.connection))
        .sortBy(_.shardId).map(s => stream -> ShardKey(stream.name, s.shardId))
    }
    options.shardStarts.checkKnown(listed.map(_._2).toSet)
    val shards = listed.map { case (stream, key) =>
      BatchShard(stream, key.shardId, options.shardStarts.get(key).getOrElse(start))
    }
    shards.grouped(options.shardsPerTask).map { group =>
      KinesisBatchInputPartition(group, asOfMillis, options.connection, options.fetch): InputPartition
    }.toArray
  }

  override def createReaderFactory(): PartitionReaderFactory =
    KinesisBatchReaderFactory(options.columns)
}
