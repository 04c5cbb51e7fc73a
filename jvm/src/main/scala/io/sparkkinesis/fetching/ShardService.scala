package io.sparkkinesis.fetching

import io.sparkkinesis.aws.{AwsConnection, KinesisClients, RetryPolicy, ShardDescription, ShardListing}
import io.sparkkinesis.aws.{Contact, StreamRef}
import io.sparkkinesis.offsets.StartPosition

/**
 * Which service a query's shards live in: the one seam between the engine (offsets, lineage, planning, prefetch,
 * triggers, budgets, metrics) and the service it reads. A source chooses it from its format (`source.SourceOptions`)
 * and it travels to the executors in [[FetchSettings]]. It lists a stream's shards, for the driver, and opens a
 * shard's fetcher, for whoever reads ([[ShardFetchers.open]] asks it); everything else is the engine's, unchanged.
 */
private[sparkkinesis] sealed trait ShardService extends Serializable {

  /** Every shard of `stream`, once each, under `policy`. */
  def list(connection: AwsConnection, stream: StreamRef, policy: RetryPolicy): Seq[ShardDescription]

  /** A fetcher of one shard from `start` (through [[ShardFetchers.open]], the one place that opens them). */
  private[fetching] def open(
      connection: AwsConnection,
      stream: StreamRef,
      shardId: String,
      start: StartPosition,
      settings: FetchSettings,
      closed: Boolean): ShardFetcher
}

private[sparkkinesis] object ShardService {

  /** Kinesis Data Streams: ListShards; GetRecords or enhanced fan-out ([[ShardFetchers]]). */
  case object Kinesis extends ShardService {
    override def list(connection: AwsConnection, stream: StreamRef, policy: RetryPolicy): Seq[ShardDescription] =
      ShardListing.list(stream, policy)(KinesisClients.sync(connection).listShards)

    override private[fetching] def open(
        connection: AwsConnection,
        stream: StreamRef,
        shardId: String,
        start: StartPosition,
        settings: FetchSettings,
        closed: Boolean): ShardFetcher = ShardFetchers.openKinesis(connection, stream, shardId, start, settings, closed)
  }

  /**
   * DynamoDB Streams (`format("dynamodb-streams")`): DescribeStream pages, and GetRecords through the SDK's
   * DynamoDB Streams client ([[StreamsShardFetcher]]), whose records the engine carries as Kinesis records
   * ([[StreamRecordCodec]]).
   */
  case object DynamoDbStreams extends ShardService {
    override def list(connection: AwsConnection, stream: StreamRef, policy: RetryPolicy): Seq[ShardDescription] =
      io.sparkkinesis.aws.DynamoDbStreams.list(connection, stream, policy)

    override private[fetching] def open(
        connection: AwsConnection,
        stream: StreamRef,
        shardId: String,
        start: StartPosition,
        settings: FetchSettings,
        closed: Boolean): ShardFetcher =
      new StreamsShardFetcher(() => ShardFetchers.streamsClients(connection), stream, shardId, start,
        settings.maxRecordsPerCall, settings.minPeriodMillis, settings.failOnDataLoss, Some(Contact.of(connection)))
  }
}
