package io.sparkkinesis.fetching

import io.sparkkinesis.aws.{AwsConnection, KinesisClients, RetryPolicy, ShardDescription, ShardListing}
import io.sparkkinesis.aws.StreamRef

/**
 * Which service a query's shards live in: the one seam between the engine (offsets, lineage, planning, prefetch,
 * triggers, budgets, metrics) and the service it reads. A source chooses it from its format (`source.SourceOptions`)
 * and it travels to the executors in [[FetchSettings]]. It lists a stream's shards, for the driver, and opens a
 * shard's fetcher, for whoever reads ([[ShardFetchers.open]] asks it); everything else is the engine's, unchanged.
 */
private[sparkkinesis] sealed trait ShardService extends Serializable {

  /** Every shard of `stream`, once each, under `policy`. */
  def list(connection: AwsConnection, stream: StreamRef, policy: RetryPolicy): Seq[ShardDescription]
}

private[sparkkinesis] object ShardService {

  /** Kinesis Data Streams: ListShards; GetRecords or enhanced fan-out ([[ShardFetchers]]). */
  case object Kinesis extends ShardService {
    override def list(connection: AwsConnection, stream: StreamRef, policy: RetryPolicy): Seq[ShardDescription] =
      ShardListing.list(stream, policy)(KinesisClients.sync(connection).listShards)
  }

  /**
   * DynamoDB Streams (`format("dynamodb-streams")`): DescribeStream pages, and GetRecords through the SDK's
   * DynamoDB Streams client ([[StreamsShardFetcher]]), whose records the engine carries as Kinesis records
   * ([[StreamRecordCodec]]).
   */
  case object DynamoDbStreams extends ShardService {
    override def list(connection: AwsConnection, stream: StreamRef, policy: RetryPolicy): Seq[ShardDescription] =
      io.sparkkinesis.aws.DynamoDbStreams.list(connection, stream, policy)
  }
}
