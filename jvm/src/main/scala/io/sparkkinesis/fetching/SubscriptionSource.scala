package io.sparkkinesis.fetching

import java.util.concurrent.CompletableFuture

import software.amazon.awssdk.services.kinesis.model.{SubscribeToShardRequest, SubscribeToShardResponseHandler}

import io.sparkkinesis.aws.{AwsConnection, KinesisClients}

/**
 * Where enhanced fan-out subscriptions come from: SubscribeToShard on the connection's HTTP/2 client. A seam of its
 * own so that tests can play what a local server cannot (shard end with child shards, a takeover, an error in the
 * middle of a subscription, a subscription that stays silent) around the real one.
 */
private[sparkkinesis] trait SubscriptionSource {

  /** Opens a subscription; `handler` gets its events. The future ends when the subscription does. */
  def subscribe(request: SubscribeToShardRequest, handler: SubscribeToShardResponseHandler): CompletableFuture[Void]
}

private[sparkkinesis] object SubscriptionSource {

  /** The real one, on the JVM's fan-out client for `connection`. */
  def of(connection: AwsConnection): SubscriptionSource = new SubscriptionSource {
    override def subscribe(
        request: SubscribeToShardRequest,
        handler: SubscribeToShardResponseHandler): CompletableFuture[Void] =
      KinesisClients.fanOut(connection).subscribeToShard(request, handler)
  }
}
