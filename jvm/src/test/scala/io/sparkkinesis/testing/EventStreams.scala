package io.sparkkinesis.testing

import java.util.concurrent.CompletableFuture

import org.reactivestreams.{Subscriber, Subscription}
import software.amazon.awssdk.core.async.SdkPublisher
import software.amazon.awssdk.services.kinesis.model.{
  SubscribeToShardEventStream,
  SubscribeToShardResponse,
  SubscribeToShardResponseHandler
}

/**
 * The SDK's side of a SubscribeToShard call, for the fakes that answer it in place of a server
 * ([[FakeSubscriptions]], `fetching.ScriptedSubscriptions`): the response, then the event stream, whose subscriber
 * asks for events and may cancel; or the call refused.
 */
object EventStreams {

  type EventSubscriber = Subscriber[_ >: SubscribeToShardEventStream]

  /**
   * Opens the event stream as the SDK does once the service accepted the call: `subscribed` gets the subscriber
   * first, then the subscriber gets a subscription whose requests go to `onRequest` and whose cancel to `onCancel`.
   */
  def open(handler: SubscribeToShardResponseHandler)(onRequest: Long => Unit, onCancel: () => Unit)(
      subscribed: EventSubscriber => Unit): Unit = {
    handler.responseReceived(SubscribeToShardResponse.builder().build())
    handler.onEventStream(new SdkPublisher[SubscribeToShardEventStream] {
      override def subscribe(s: EventSubscriber): Unit = {
        subscribed(s)
        s.onSubscribe(new Subscription {
          override def request(n: Long): Unit = onRequest(n)
          override def cancel(): Unit = onCancel()
        })
      }
    })
  }

  /** The call refused with `e`, as the SDK reports it: to the handler, and in the future the call returns. */
  def refused(handler: SubscribeToShardResponseHandler, e: Throwable): CompletableFuture[Void] = {
    handler.exceptionOccurred(e)
    val failed = new CompletableFuture[Void]()
    failed.completeExceptionally(e)
    failed
  }
}
