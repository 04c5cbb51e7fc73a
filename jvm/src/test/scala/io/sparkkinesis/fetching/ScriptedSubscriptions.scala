package io.sparkkinesis.fetching

import java.util.concurrent.CompletableFuture

import scala.collection.mutable

import io.sparkkinesis.compat.CollectionConverters._
import io.sparkkinesis.testing.EventStreams

import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.services.kinesis.model._

/**
 * A [[SubscriptionSource]] whose subscriptions the test drives by hand, as the service would: it sends events
 * (only as many as were asked for: a publisher that sends more breaks the reactive-streams contract, and the
 * fetcher must never need it to), ends subscriptions, fails them, or refuses to open them. For the faults no local
 * server produces: shard end with child shards, a takeover, an error in the middle, a subscription that stays
 * silent.
 */
final class ScriptedSubscriptions extends SubscriptionSource {

  /** One subscription the fetcher opened. */
  final class Opened(val request: SubscribeToShardRequest, handler: SubscribeToShardResponseHandler) {
    val done = new CompletableFuture[Void]()
    @volatile var requested = 0L
    @volatile var cancelled = false
    @volatile var delivered = 0L
    private var subscriber: EventStreams.EventSubscriber = _

    def start(): Unit =
      EventStreams.open(handler)(
        n => sdkLock.synchronized(Opened.this.synchronized { requested += n }),
        () => { cancelled = true; done.complete(null) })(subscriber = _)

    /** Sends an event, which must have been asked for. */
    def send(event: SubscribeToShardEvent): Unit = {
      Opened.this.synchronized {
        assert(delivered < requested, s"an event was sent that was not asked for ($delivered of $requested)")
        delivered += 1
      }
      subscriber.onNext(event)
    }

    /** Sends an event while holding the lock `request` takes, as an SDK event loop may. */
    def sendHoldingSdkLock(event: SubscribeToShardEvent): Unit = sdkLock.synchronized(send(event))

    /** Events asked for and not sent yet. */
    def demand: Long = Opened.this.synchronized(requested - delivered)

    /** The service ends the subscription normally (its 5 minutes are up). */
    def complete(): Unit = { subscriber.onComplete(); handler.complete(); done.complete(null) }

    /** The subscription fails in the middle. */
    def fail(e: Throwable): Unit = { handler.exceptionOccurred(e); done.completeExceptionally(e) }
  }

  private val all = mutable.ArrayBuffer.empty[Opened]

  /** A lock of "the SDK": `request` takes it, and so does [[Opened.sendHoldingSdkLock]]. */
  val sdkLock = new Object

  /** Whether the next subscribe call is refused with this error instead of opened. */
  @volatile var refuseNext: Option[Throwable] = None

  def opened: Seq[Opened] = synchronized(all.toList)
  def last: Opened = synchronized(all.last)

  override def subscribe(
      request: SubscribeToShardRequest,
      handler: SubscribeToShardResponseHandler): CompletableFuture[Void] = {
    refuseNext match {
      case Some(e) =>
        refuseNext = None
        synchronized(all += new Opened(request, handler))
        EventStreams.refused(handler, e)
      case None =>
        val o = new Opened(request, handler)
        synchronized(all += o)
        o.start()
        o.done
    }
  }
}

object ScriptedSubscriptions {

  def record(seq: Long, key: String = "k"): Record =
    Record.builder().sequenceNumber(seq.toString).partitionKey(key).data(SdkBytes.fromUtf8String(s"r$seq"))
      .approximateArrivalTimestamp(java.time.Instant.ofEpochMilli(1000L + seq)).build()

  /** An event with `seqs` as records, the continuation after the last (or `continuation`), `behind` ms behind. */
  def event(seqs: Seq[Long], continuation: Long, behind: Long = 0L): SubscribeToShardEvent =
    SubscribeToShardEvent.builder().records(seqs.map(s => record(s)).asJava)
      .continuationSequenceNumber(continuation.toString).millisBehindLatest(behind).build()

  /** The shard's last event: records, no continuation, and its children. */
  def lastEvent(seqs: Seq[Long], children: Seq[String]): SubscribeToShardEvent =
    SubscribeToShardEvent.builder().records(seqs.map(s => record(s)).asJava).millisBehindLatest(0L)
      .childShards(
        children.map(c => ChildShard.builder().shardId(c).parentShards("shardId-000000000000").build()).asJava)
      .build()
}
