package io.sparkkinesis.testing

import java.time.Instant
import java.util.concurrent.{CompletableFuture, Executors, ScheduledFuture, TimeUnit}
import java.util.concurrent.atomic.AtomicLong

import io.sparkkinesis.runtime.DaemonThreads
import io.sparkkinesis.compat.CollectionConverters._

import software.amazon.awssdk.awscore.exception.AwsServiceException
import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.services.kinesis.KinesisAsyncClient
import software.amazon.awssdk.services.kinesis.model._

/**
 * [[FakeKinesis]]'s enhanced fan-out client: SubscribeToShard for its registered consumers, as the service answers
 * it. A subscription sends an event when asked for one and it has records (up to 1,000) or a second passed since
 * the last, each with the continuation sequence number and MillisBehindLatest; at a closed shard's end its last
 * event names the child shards and has no continuation; it ends after 5 minutes. With limits, a second
 * SubscribeToShard within a second for the same consumer and shard is refused with LimitExceededException. Every
 * subscription is driven from one thread, so the fake costs little beside the connector.
 */
final class FakeSubscriptions(fake: FakeKinesis, clock: () => Long) extends KinesisAsyncClient {
  import FakeSubscriptions._

  override def serviceName(): String = "kinesis"
  override def close(): Unit = ()

  private lazy val pump =
    Executors.newSingleThreadScheduledExecutor(DaemonThreads.factory("fake-kinesis-subscriptions"))

  override def subscribeToShard(
      request: SubscribeToShardRequest,
      handler: SubscribeToShardResponseHandler): CompletableFuture[Void] = {
    fake.countCall("SubscribeToShard")
    try {
      fake.admit("SubscribeToShard", s"${request.consumerARN()}|${request.shardId()}", _.subscribePerShard)
      val consumer = fake.consumer(request.consumerARN())
        .getOrElse(throw FakeKinesis.notFound(s"Consumer ${request.consumerARN()} not found"))
      val stream = fake.stream(consumer.streamARN().substring(consumer.streamARN().lastIndexOf('/') + 1))
      val shard =
        stream.shard(request.shardId()).getOrElse(throw FakeKinesis.notFound(s"Shard ${request.shardId()} not found"))
      val p = request.startingPosition()
      val start = fake.startIndex(shard, p.typeAsString(), p.sequenceNumber(), p.timestamp())
      val open = new Open(stream, shard, start, handler)
      open.start()
      open.done
    } catch {
      case e: AwsServiceException => EventStreams.refused(handler, e)
    }
  }

  /** One subscription; everything it does runs on the pump thread. */
  private final class Open(
      stream: FakeStream,
      shard: FakeShard,
      start: Long,
      handler: SubscribeToShardResponseHandler) {
    val done = new CompletableFuture[Void]()
    private val requested = new AtomicLong
    private var delivered = 0L
    private var position = start
    private val openedAt = clock()
    private var lastEventAt = 0L
    @volatile private var finished = false
    private var subscriber: EventStreams.EventSubscriber = _
    private var ticking: ScheduledFuture[_] = _

    // Ticks only send what the subscriber asked for, so the first cannot come before its subscription.
    def start(): Unit =
      EventStreams.open(handler)(
        n => { requested.addAndGet(n); pump.execute(() => tick()) },
        () => pump.execute(() => end(notify = false))) { s =>
        subscriber = s
        ticking = pump.scheduleWithFixedDelay(() => tick(), TickMillis, TickMillis, TimeUnit.MILLISECONDS)
      }

    private def tick(): Unit = if (!finished && subscriber != null) {
      val now = clock()
      if (now - openedAt >= LifetimeMillis) end(notify = true)
      else if (requested.get > delivered) {
        val (records, size) = shard.slice(position, MaxRecordsPerEvent)
        val next = position + records.size
        val atEnd = shard.closed && next >= size
        if (records.nonEmpty || atEnd || now - lastEventAt >= EmptyEventMillis) {
          val event = SubscribeToShardEvent.builder()
            .records(records.map { case (i, key, data, arrival) =>
              Record.builder().sequenceNumber(shard.sequenceNumber(i)).partitionKey(key)
                .data(SdkBytes.fromByteArrayUnsafe(data)).approximateArrivalTimestamp(Instant.ofEpochMilli(arrival))
                .build()
            }.asJava)
            .millisBehindLatest(if (next >= size) 0L else math.max(1L, now - shard.arrival(next)))
          if (atEnd) event.childShards(fake.childShards(stream, shard.id).asJava)
          else event.continuationSequenceNumber(shard.sequenceNumber(next - 1))
          position = next
          delivered += 1
          lastEventAt = now
          subscriber.onNext(event.build())
          if (atEnd) end(notify = true)
        }
      }
    }

    private def end(notify: Boolean): Unit = if (!finished) {
      finished = true
      if (ticking != null) ticking.cancel(false)
      if (notify) {
        subscriber.onComplete()
        handler.complete()
      }
      done.complete(null)
    }
  }
}

object FakeSubscriptions {
  private val TickMillis = 200L
  private val EmptyEventMillis = 1000L
  private val MaxRecordsPerEvent = 1000
  private val LifetimeMillis = 5L * 60 * 1000
}
