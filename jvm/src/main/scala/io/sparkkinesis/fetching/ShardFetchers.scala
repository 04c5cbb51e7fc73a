package io.sparkkinesis.fetching

import io.sparkkinesis.aws.{AwsConnection, Contact, KinesisClients, StreamRef}
import io.sparkkinesis.offsets.StartPosition

/**
 * The one place that builds shard fetchers, for prefetch buffers, range re-reads and batch reads alike: by
 * enhanced fan-out when `settings` carries a consumer for the stream (the prefetch buffers of a query with
 * `consumerMode=efo`), else by GetRecords.
 */
private[sparkkinesis] object ShardFetchers {

  /**
   * Where fan-out subscriptions come from, for a connection: SubscribeToShard on the JVM's HTTP/2 client. Tests put
   * a fault-playing layer around it (in local mode the executors share the test's JVM).
   */
  @volatile private[sparkkinesis] var subscriptions: AwsConnection => SubscriptionSource = SubscriptionSource.of

  def open(
      connection: AwsConnection,
      stream: StreamRef,
      shardId: String,
      start: StartPosition,
      settings: FetchSettings): ShardFetcher =
    settings.consumers.get(stream.name) match {
      case Some(consumerArn) =>
        new FanOutShardFetcher(subscriptions(connection), consumerArn, stream, shardId, start,
          settings.maxRecordsPerCall, settings.failOnDataLoss,
          fallback = Some(from => polling(connection, stream, shardId, from, settings)))
      case None => polling(connection, stream, shardId, start, settings)
    }

  private def polling(
      connection: AwsConnection,
      stream: StreamRef,
      shardId: String,
      start: StartPosition,
      settings: FetchSettings): ShardFetcher =
    new PollingShardFetcher(() => KinesisClients.sync(connection), stream, shardId, start,
      settings.maxRecordsPerCall, settings.minPeriodMillis, settings.failOnDataLoss, Some(Contact.of(connection)))
}
