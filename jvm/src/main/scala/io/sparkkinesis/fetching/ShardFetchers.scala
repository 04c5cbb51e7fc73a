package io.sparkkinesis.fetching

import io.sparkkinesis.aws.{AwsConnection, Contact, KinesisClients, StreamRef}
import io.sparkkinesis.offsets.StartPosition

/** The one place that builds shard fetchers, for prefetch buffers, range re-reads and batch reads alike. */
private[sparkkinesis] object ShardFetchers {

  def open(
      connection: AwsConnection,
      stream: StreamRef,
      shardId: String,
      start: StartPosition,
      settings: FetchSettings): ShardFetcher =
    new PollingShardFetcher(() => KinesisClients.sync(connection), stream, shardId, start, settings.maxRecordsPerCall,
      settings.minPeriodMillis, settings.failOnDataLoss, Some(Contact.of(connection)))
}
