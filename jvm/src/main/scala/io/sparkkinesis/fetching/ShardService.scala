package io.sparkkinesis.fetching

import io.sparkkinesis.aws.{AwsConnection, KinesisClients, RetryPolicy, ShardDescription, ShardListing}
import io.sparkkinesis.aws.StreamRef
import io.sparkkinesis.offsets.StartPosition

/**
 * Which service a query's shards live in: the one seam between the engine (offsets, lineage, planning, prefetch,
 * triggers, budgets, metrics) and the service it reads. A source chooses it from its format (`source.SourceOptions`)
 * and it travels to the executors in [[FetchSettings]]. It lists a stream's shards, for the driver, finds the
 * children of a shard read to its end (the driver's `source.ShardTracker`, a real-time task), and opens a shard's
 * fetcher, for whoever reads ([[ShardFetchers.open]] asks it); everything else is the engine's, unchanged.
 */
private[sparkkinesis] sealed trait ShardService extends Serializable {

  /** Every shard of `stream`, once each, under `policy`. */
  def list(connection: AwsConnection, stream: StreamRef, policy: RetryPolicy): Seq[ShardDescription]

  /** The shards of `stream` whose parent (or adjacent parent) is `ended`, a shard read to its end. */
  def children(connection: AwsConnection, stream: StreamRef, ended: String, policy: RetryPolicy): Seq[ShardDescription]

  /**
   * Whether [[children]] asks the service for those shards alone, which is cheaper than [[list]]: then the driver
   * looks up the children of each shard that ends between its periodic listings instead of listing the stream
   * again. Otherwise [[children]] is a listing of the whole stream, and the driver lists as before.
   */
  def findsChildren: Boolean

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

  /**
   * Kinesis Data Streams: ListShards; GetRecords or enhanced fan-out ([[ShardFetchers]]). ListShards has no filter
   * for a shard's children, so they are found in a listing of the stream.
   */
  case object Kinesis extends ShardService {
    override def list(connection: AwsConnection, stream: StreamRef, policy: RetryPolicy): Seq[ShardDescription] =
      ShardListing.list(stream, policy)(KinesisClients.sync(connection).listShards)

    override def children(
        connection: AwsConnection,
        stream: StreamRef,
        ended: String,
        policy: RetryPolicy): Seq[ShardDescription] =
      list(connection, stream, policy).filter(_.parents.contains(ended))

    override def findsChildren: Boolean = false

    override private[fetching] def open(
        connection: AwsConnection,
        stream: StreamRef,
        shardId: String,
        start: StartPosition,
        settings: FetchSettings,
        closed: Boolean): ShardFetcher = ShardFetchers.openKinesis(connection, stream, shardId, start, settings, closed)
  }

  /**
   * DynamoDB Streams (`format("dynamodb-streams")`): DescribeStream pages; an ended shard's children by
   * DescribeStream's `CHILD_SHARDS` filter (a stream lists every shard of the last 24 hours, a shard's children are
   * one or two); GetRecords through the SDK's DynamoDB Streams client (the one [[PollingShardFetcher]] on
   * [[StreamsShardCalls]]), whose records the engine carries as Kinesis records ([[StreamRecordCodec]]).
   */
  case object DynamoDbStreams extends ShardService {
    override def list(connection: AwsConnection, stream: StreamRef, policy: RetryPolicy): Seq[ShardDescription] =
      io.sparkkinesis.aws.DynamoDbStreams.list(connection, stream, policy)

    override def children(
        connection: AwsConnection,
        stream: StreamRef,
        ended: String,
        policy: RetryPolicy): Seq[ShardDescription] =
      io.sparkkinesis.aws.DynamoDbStreams.children(KinesisClients.dynamoDbStreams(connection), stream, ended, policy)

    override def findsChildren: Boolean = true

    override private[fetching] def open(
        connection: AwsConnection,
        stream: StreamRef,
        shardId: String,
        start: StartPosition,
        settings: FetchSettings,
        closed: Boolean): ShardFetcher =
      ShardFetchers.polling(connection,
        new StreamsShardCalls(() => ShardFetchers.streamsClients(connection), stream, shardId), start, settings)
  }
}
