package io.sparkkinesis.fetching

import java.util.concurrent.{CompletableFuture, ConcurrentHashMap}
import java.util.concurrent.atomic.{AtomicInteger, AtomicLong}

import io.sparkkinesis.compat.CollectionConverters._

import org.reactivestreams.{Subscriber, Subscription}
import software.amazon.awssdk.core.async.SdkPublisher
import software.amazon.awssdk.services.kinesis.KinesisClient
import software.amazon.awssdk.services.kinesis.model._

/**
 * A fault layer around real subscriptions (kinesis-mock's), for what that server cannot do itself:
 *  - `signalShardEnd`: kinesis-mock never ends a closed shard's subscription. Here the first event with no records
 *    on a shard that ListShards shows closed, once the subscription has delivered the shard's last record (read
 *    with GetRecords), is replaced by the shard's last event as the service sends it (no continuation sequence
 *    number, the child shards), and the subscription ends. kinesis-mock may send an empty event before records it
 *    holds (a subscription's first), so an empty event alone does not mean the end was reached;
 *  - `cutAfterEvents`: ends every subscription after that many events, as the service does after 5 minutes;
 *  - `takeOverFirst`: the first subscription of each shard is refused with ResourceInUseException, as when another
 *    reader of the same consumer holds the shard;
 *  - `failAfterEvents`: the first subscription opened on each shard breaks with an I/O error after that many events.
 * It forwards demand as it gets it and replaces events one for one, so it asks the server for nothing extra.
 */
final class FaultySubscriptions(
    real: SubscriptionSource,
    kinesis: KinesisClient,
    streamName: String,
    signalShardEnd: Boolean = false,
    cutAfterEvents: Option[Int] = None,
    takeOverFirst: Boolean = false,
    failAfterEvents: Option[Int] = None) extends SubscriptionSource {

  private val subscribedShards = ConcurrentHashMap.newKeySet[String]()
  private val openedShards = ConcurrentHashMap.newKeySet[String]()
  val subscribes = new AtomicInteger()
  val endsSignalled = new AtomicInteger()
  val cuts = new AtomicInteger()
  val takeOvers = new AtomicInteger()
  val breaks = new AtomicInteger()
  private val lastClosedCheck = new ConcurrentHashMap[String, AtomicLong]()

  override def subscribe(
      request: SubscribeToShardRequest,
      handler: SubscribeToShardResponseHandler): CompletableFuture[Void] = {
    subscribes.incrementAndGet()
    val first = subscribedShards.add(request.shardId())
    if (first && takeOverFirst) {
      takeOvers.incrementAndGet()
      val e =
        ResourceInUseException.builder().message(s"Another subscription holds ${request.shardId()} (fault)").build()
      handler.exceptionOccurred(e)
      val f = new CompletableFuture[Void]()
      f.completeExceptionally(e)
      f
    } else {
      val firstOpened = openedShards.add(request.shardId())
      val start = Option(request.startingPosition()).filter(_.`type`() == ShardIteratorType.AFTER_SEQUENCE_NUMBER)
        .map(p => BigInt(p.sequenceNumber()))
      real.subscribe(request,
        new Relay(request.shardId(), handler, if (firstOpened) failAfterEvents else None, start))
    }
  }

  // The sequence number of a closed shard's last record (None: it has none), read once: it no longer changes.
  private val lastRecords = new ConcurrentHashMap[String, Option[BigInt]]()

  private def lastRecordOf(shardId: String): Option[BigInt] = lastRecords.computeIfAbsent(shardId,
    _ => {
      var iterator = kinesis.getShardIterator(GetShardIteratorRequest.builder().streamName(streamName).shardId(shardId)
          .shardIteratorType(ShardIteratorType.TRIM_HORIZON).build()).shardIterator()
      var last: Option[BigInt] = None
      while (iterator != null) {
        val page = kinesis.getRecords(GetRecordsRequest.builder().shardIterator(iterator).limit(10000).build())
        page.records().asScala.lastOption.foreach(r => last = Some(BigInt(r.sequenceNumber())))
        iterator = page.nextShardIterator()
      }
      last
    })

  /** The shard's children when ListShards shows it closed (checked at most twice a second per shard). */
  private def children(shardId: String): Option[Seq[String]] = {
    val last = lastClosedCheck.computeIfAbsent(shardId, _ => new AtomicLong(0L))
    val now = System.currentTimeMillis()
    if (now - last.get() < 500) None
    else {
      last.set(now)
      val shards = kinesis.listShards(ListShardsRequest.builder().streamName(streamName).build()).shards().asScala
      shards.find(_.shardId() == shardId).filter(s => s.sequenceNumberRange().endingSequenceNumber() != null).map { _ =>
        shards.filter(s => s.parentShardId() == shardId || s.adjacentParentShardId() == shardId).map(_.shardId()).toSeq
      }
    }
  }

  /** `reached`: the last record this subscription is past (its start, then each event's last record). */
  private final class Relay(
      shardId: String,
      downstream: SubscribeToShardResponseHandler,
      breakAfter: Option[Int],
      @volatile private var reached: Option[BigInt]) extends SubscribeToShardResponseHandler {
    override def responseReceived(r: SubscribeToShardResponse): Unit = downstream.responseReceived(r)
    override def exceptionOccurred(t: Throwable): Unit = downstream.exceptionOccurred(t)
    override def complete(): Unit = downstream.complete()

    override def onEventStream(upstream: SdkPublisher[SubscribeToShardEventStream]): Unit =
      downstream.onEventStream(new SdkPublisher[SubscribeToShardEventStream] {
        override def subscribe(s: Subscriber[_ >: SubscribeToShardEventStream]): Unit =
          upstream.subscribe(new Subscriber[SubscribeToShardEventStream] {
            private var up: Subscription = _
            private var events = 0
            @volatile private var over = false

            override def onSubscribe(sub: Subscription): Unit = { up = sub; s.onSubscribe(sub) }

            override def onNext(item: SubscribeToShardEventStream): Unit = if (!over) item match {
              case e: SubscribeToShardEvent =>
                events += 1
                e.records().asScala.lastOption.foreach(r => reached = Some(BigInt(r.sequenceNumber())))
                val ending =
                  if (signalShardEnd && e.records().isEmpty)
                    children(shardId).filter(_ => lastRecordOf(shardId).forall(last => reached.exists(_ >= last)))
                  else None
                ending match {
                  case Some(kids) =>
                    endsSignalled.incrementAndGet()
                    s.onNext(e.toBuilder.continuationSequenceNumber(null).childShards(kids.map(k =>
                          ChildShard.builder().shardId(k).parentShards(shardId).build()).asJava).build())
                    finish(s, None)
                  case None if breakAfter.exists(events > _) =>
                    breaks.incrementAndGet()
                    finish(s, Some(new java.io.IOException(s"connection reset in the middle of $shardId (fault)")))
                  case None =>
                    s.onNext(e)
                    if (cutAfterEvents.exists(events >= _)) { cuts.incrementAndGet(); finish(s, None) }
                }
              case other => s.onNext(other)
            }

            private def finish(s: Subscriber[_ >: SubscribeToShardEventStream], error: Option[Throwable]): Unit = {
              over = true
              up.cancel()
              error match {
                case Some(e) => s.onError(e); downstream.exceptionOccurred(e)
                case None => s.onComplete(); downstream.complete()
              }
            }

            override def onError(t: Throwable): Unit = if (!over) s.onError(t)
            override def onComplete(): Unit = if (!over) s.onComplete()
          })
      })
  }
}

object FaultySubscriptions {

  /** Runs `body` with executors subscribing through `layer` (local mode: the executors share the test's JVM). */
  def through[T](layer: SubscriptionSource)(body: => T): T = {
    val before = ShardFetchers.subscriptions
    ShardFetchers.subscriptions = _ => layer
    try body
    finally ShardFetchers.subscriptions = before
  }
}
