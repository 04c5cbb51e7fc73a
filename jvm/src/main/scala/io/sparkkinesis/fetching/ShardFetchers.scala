package io.sparkkinesis.fetching

import software.amazon.awssdk.services.dynamodb.streams.DynamoDbStreamsClient
import software.amazon.awssdk.services.kinesis.KinesisClient

import io.sparkkinesis.aws.{AwsConnection, Contact, KinesisClients, StreamRef}
import io.sparkkinesis.offsets.StartPosition

/**
 * The one place that builds shard fetchers, for prefetch buffers, range re-reads and batch reads alike: for
 * DynamoDB Streams ([[ShardService.DynamoDbStreams]]) by its GetRecords; for Kinesis by
 * enhanced fan-out when `settings` carries a consumer for the stream (the prefetch buffers of a query with
 * `consumerMode=efo`), else by GetRecords.
 *
 * A shard the driver's listing shows `closed` is read by GetRecords whatever the mode: a closed shard's records no
 * longer change, and GetRecords reaches its end for certain (a null next iterator), while a subscription learns it
 * only from the service's shard-end event, which not every server sends (kinesis-mock never does). So reading never
 * depends on that event to go on into the children.
 */
private[sparkkinesis] object ShardFetchers {

  /**
   * Where fan-out subscriptions come from, for a connection: SubscribeToShard on the JVM's HTTP/2 client. Tests put
   * a fault-playing layer around it (in local mode the executors share the test's JVM).
   */
  @volatile private[sparkkinesis] var subscriptions: AwsConnection => SubscriptionSource = SubscriptionSource.of

  /**
   * Where Kinesis's GetRecords fetchers get their client, for a connection: the JVM's cache. Tests put a fault-playing
   * layer around it (throttling, expired iterators, dropped connections: what a local server does not do on its own).
   */
  @volatile private[sparkkinesis] var clients: AwsConnection => KinesisClient = KinesisClients.sync

  /** Where DynamoDB Streams fetchers get their client, for a connection: the JVM's cache. */
  @volatile private[sparkkinesis] var streamsClients: AwsConnection => DynamoDbStreamsClient =
    KinesisClients.dynamoDbStreams

  def open(
      connection: AwsConnection,
      stream: StreamRef,
      shardId: String,
      start: StartPosition,
      settings: FetchSettings,
      closed: Boolean = false): ShardFetcher =
    settings.service.open(connection, stream, shardId, start, settings, closed)

  /** Kinesis's fetcher ([[ShardService.Kinesis]]): enhanced fan-out or GetRecords, as the class comment says. */
  private[fetching] def openKinesis(
      connection: AwsConnection,
      stream: StreamRef,
      shardId: String,
      start: StartPosition,
      settings: FetchSettings,
      closed: Boolean): ShardFetcher = {
    val shard = new KinesisShardCalls(() => clients(connection), stream, shardId)
    val fetcher = settings.mode.consumerOf(stream.name).filterNot(_ => closed) match {
      case Some(consumerArn) =>
        new FanOutShardFetcher(subscriptions(connection), consumerArn, stream, shardId, start,
          settings.maxRecordsPerCall, settings.failOnDataLoss,
          fallback = Some(from => polling(connection, shard, from, settings)))
      case None => polling(connection, shard, start, settings)
    }
    fetcher.subRecords = SubRecordFilter.forShard(connection, stream, shardId, settings.dropOutOfRangeSubRecords)
    fetcher
  }

  /**
   * Whether `fetcher`, opened before the driver's listing showed the shard `closed`, still reads it as [[open]] would
   * now: a subscription does not (a closed shard is read to its end by GetRecords), unless it already reached the end.
   */
  def stillFits(fetcher: ShardFetcher, closed: Boolean): Boolean = !(closed && fetcher.pushed && !fetcher.shardEnded)

  /** A GetRecords fetcher of `shard`, of either service, under the query's settings. */
  private[fetching] def polling(
      connection: AwsConnection,
      shard: ShardCalls,
      start: StartPosition,
      settings: FetchSettings): ShardFetcher =
    new PollingShardFetcher(shard, start, settings.maxRecordsPerCall, settings.minPeriodMillis,
      settings.failOnDataLoss, Some(Contact.of(connection)))
}
