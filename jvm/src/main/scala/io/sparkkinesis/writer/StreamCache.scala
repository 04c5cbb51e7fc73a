package io.sparkkinesis.writer

import java.util.concurrent.ConcurrentHashMap

import software.amazon.awssdk.services.kinesis.KinesisAsyncClient

import io.sparkkinesis.aws.StreamRef

/**
 * What the writers of one executor learn about a stream, kept per client (that is, per connection) and stream and
 * loaded again once `expiryMillis` old, rather than once per task.
 */
private[writer] final class StreamCache[V](expiryMillis: Long) {
  private val cache = new ConcurrentHashMap[(KinesisAsyncClient, StreamRef), (V, Long)]()

  def get(client: KinesisAsyncClient, stream: StreamRef, nowMillis: Long)(load: => V): V = {
    // Expired entries leave, so the cache holds on to no client that the client cache has since let go.
    cache.entrySet().removeIf(e => nowMillis - e.getValue._2 >= expiryMillis)
    cache.compute((client, stream),
      (_, cached) => if (cached != null && nowMillis - cached._2 < expiryMillis) cached else (load, nowMillis))._1
  }

  /** Keeps `value`, loaded at `nowMillis`, in place of what was there (it is known to be out of date). */
  def put(client: KinesisAsyncClient, stream: StreamRef, nowMillis: Long, value: V): V = {
    cache.put((client, stream), (value, nowMillis))
    value
  }
}
