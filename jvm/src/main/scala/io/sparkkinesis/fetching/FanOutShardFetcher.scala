package io.sparkkinesis.fetching

import java.util.concurrent.{ScheduledExecutorService, ScheduledFuture, TimeUnit}

import scala.util.control.NonFatal

import org.apache.spark.internal.Logging
import org.reactivestreams.{Subscriber, Subscription}
import software.amazon.awssdk.services.kinesis.model._

import io.sparkkinesis.runtime.DaemonThreads
import io.sparkkinesis.aws.{Backoff, StreamRef}
import io.sparkkinesis.offsets.StartPosition

/**
 * Reads one shard by enhanced fan-out: a long-lived SubscribeToShard subscription of the query's consumer pushes
 * events into a small queue, and [[fetch]] hands out their records in order, `maxRecordsPerCall` at most per page.
 * The subscription outlives prefetch rounds and batches (the fetcher lives in the executor's shard buffer), so no
 * round waits for a new one. Three parts, under this fetcher's one lock:
 *  - [[FanOutSubscriptions]]: the subscriptions' life (renewal, pacing, silence, failures and what they mean);
 *  - [[FanOutEvents]]: the events queued and what has been handed out (the shard ends with the event that has no
 *    continuation sequence number, once every record before it has been handed out: the children are then read
 *    after the parent);
 *  - [[FanOutFallback]]: while the last attempt failed (until the next event), the shard is read with GetRecords
 *    through `fallback`, from the last record handed out, so a shard is never stuck waiting for a subscription
 *    (records the next subscription sends again are dropped, as after any renewal).
 * This class makes the calls: [[maintain]] (run by every [[fetch]] and by a tick of its own each second) opens and
 * gives up subscriptions as [[FanOutSubscriptions]] decides.
 *
 * Nothing blocks the SDK's threads: the subscriber only queues events, and asks for more only while the queue has
 * room (`queuedEvents`), so an executor that is slow to read holds at most that many events per shard. An idle
 * shard costs one event every few seconds and a timestamp check each second. Calls into the SDK (subscribe,
 * request, cancel) are made outside the fetcher's lock. A reader that waits for records (a real-time task) is woken
 * through [[whenReady]] when an event is queued or a subscription ends, and asks [[readyAt]] when to look.
 */
private[sparkkinesis] final class FanOutShardFetcher(
    source: SubscriptionSource,
    consumerArn: String,
    stream: StreamRef,
    shardId: String,
    start: StartPosition,
    maxRecordsPerCall: Int,
    failOnDataLoss: Boolean = true,
    silenceMillis: Long = FanOutShardFetcher.SilenceMillis,
    maxFailures: Int = FanOutShardFetcher.MaxFailures,
    inUseLimitMillis: Long = FanOutShardFetcher.InUseLimitMillis,
    fallback: Option[StartPosition => ShardFetcher] = None,
    queuedEvents: Int = FanOutShardFetcher.QueuedEvents,
    backoff: Backoff = Backoff(baseMillis = 1000, capMillis = 10000),
    clock: () => Long = () => System.currentTimeMillis(),
    ticks: Option[ScheduledExecutorService] = Some(FanOutShardFetcher.ticks)) extends ShardFetcher with Logging {
  import FanOutSubscriptions.{describe, Sub}

  private val subs = new FanOutSubscriptions(consumerArn, stream, shardId, start, failOnDataLoss, silenceMillis,
    maxFailures, inUseLimitMillis, backoff, clock)
  private val events = new FanOutEvents(maxRecordsPerCall, queuedEvents)
  private val polling = fallback.map(new FanOutFallback(_))
  private var closed = false
  @volatile private var wake: () => Unit = () => ()
  private val tick: Option[ScheduledFuture[_]] = ticks.map(_.scheduleWithFixedDelay(
      () =>
        try maintain()
        catch { case NonFatal(e) => logWarning(s"Fan-out upkeep of shard $shardId failed: $e") },
      FanOutShardFetcher.TickMillis, FanOutShardFetcher.TickMillis, TimeUnit.MILLISECONDS))

  override def calls: Long = synchronized(subs.subscriptionsOpened + polled.calls)
  override def throttled: Long = synchronized(subs.throttled + polled.throttled)
  override def dataLoss: Long = synchronized(subs.dataLoss + polled.dataLoss)
  private def polled: FetchCounts = polling.fold(FetchCounts.Zero)(_.counts)
  override def renewals: Long = synchronized(subs.renewed)
  override def subscribeFailures: Long = synchronized(subs.failed)
  override def shardEnded: Boolean = synchronized(events.shardEnded)
  override def pushed: Boolean = true
  override def broken: Boolean = synchronized(subs.fatal.isDefined)
  override def whenReady(wake: () => Unit): Unit = this.wake = wake

  override def readyAt: Long = synchronized {
    if (subs.fatal.isDefined || events.nonEmpty || events.endArrived || closed) Long.MinValue
    else if (subs.failing) polling.fold(Long.MaxValue)(_.readyAt)
    else Long.MaxValue
  }

  /** Subscriptions opened so far (tests). */
  def opened: Long = synchronized(subs.subscriptionsOpened)

  override def fetch(patient: Boolean): FetchedPage = {
    require(!shardEnded, s"shard $shardId of $stream has ended")
    maintain()
    pollWhileUnsubscribed(patient).getOrElse(fromQueue())
  }

  private def fromQueue(): FetchedPage = {
    val (page, more) = synchronized {
      subs.fatal.foreach(e => throw e)
      (events.nextPage(), demand())
    }
    more.foreach { case (s, n) => s.request(n) }
    page
  }

  /**
   * A page read with GetRecords while subscribing fails (from the last attempt's failure until the next event), or
   * None when the queue serves.
   */
  private def pollWhileUnsubscribed(patient: Boolean): Option[FetchedPage] = {
    val poller = synchronized {
      subs.fatal.foreach(e => throw e)
      polling.filter(_ => subs.failing && !events.nonEmpty && !events.endArrived && !closed).map { f =>
        val from = events.lastHandedOut.map(StartPosition.AfterSequence(_)).getOrElse(subs.position)
        val (p, isNew) = f.fetcher(from)
        if (isNew) logInfo(s"Reading shard $shardId of stream '$stream' with GetRecords ${describe(from)} until a " +
          "fan-out subscription delivers again")
        (f, p)
      }
    }
    poller.map { case (f, p) =>
      val (page, cost) = f.read(p, patient)
      synchronized {
        f.count(cost)
        val (last, handed) = events.polled(page)
        last.foreach(subs.resumeAfter)
        handed
      }
    }
  }

  /** The subscription to ask for `n` more events, when the queue has room for events not yet asked for. */
  private def demand(): Option[(Subscription, Long)] = subs.live.flatMap { s =>
    val room = events.room(s.requested)
    if (room > 0) {
      if (s.requested == 0) s.askedAt = clock()
      s.requested += room
      Some((s.subscription, room))
    } else None
  }

  /**
   * Keeps a subscription open while the shard has not ended: renews a silent one, and opens the next one when due
   * (after the last one ended, failed or went silent; at most one call per second; after a backoff on failures).
   */
  def maintain(): Unit = {
    val now = clock()
    val (cancel, open) = synchronized {
      if (closed || events.endArrived || subs.fatal.isDefined) (None, None)
      else {
        val silent = subs.dropSilent(now)
        (silent, subs.openIfDue(now, events.hasRoom))
      }
    }
    cancel.foreach(_.cancel())
    open.foreach { case (sub, from) => subscribe(sub, from) }
  }

  private def subscribe(sub: Sub, from: StartPosition): Unit = {
    val request = SubscribeToShardRequest.builder().consumerARN(consumerArn).shardId(shardId)
      .startingPosition(FanOutShardFetcher.startingPosition(from)).build()
    val handler = SubscribeToShardResponseHandler.builder()
      .subscriber(() => new EventSubscriber(sub))
      .onError(e => finished(sub, Some(e)))
      .build()
    try source.subscribe(request, handler).whenComplete((_, e) => finished(sub, Option(e)))
    catch { case NonFatal(e) => finished(sub, Some(e)) }
  }

  /** Queues a subscription's events; never blocks (the queue has room for every event asked for). */
  private final class EventSubscriber(sub: Sub) extends Subscriber[SubscribeToShardEventStream] {
    override def onSubscribe(s: Subscription): Unit = {
      val (keep, ask) = FanOutShardFetcher.this.synchronized {
        if (!subs.isCurrent(sub)) (false, None)
        else { sub.subscription = s; (true, demand()) }
      }
      if (!keep) s.cancel()
      ask.foreach { case (subscription, n) => subscription.request(n) }
    }

    override def onNext(item: SubscribeToShardEventStream): Unit = item match {
      case event: SubscribeToShardEvent => if (queued(sub, event)) wake()
      case _ => // another kind of event (none is defined today): ask for the next one
        val ask = FanOutShardFetcher.this.synchronized {
          if (subs.isCurrent(sub)) { sub.requested -= 1; demand() }
          else None
        }
        ask.foreach { case (subscription, n) => subscription.request(n) }
    }

    override def onError(t: Throwable): Unit = finished(sub, Some(t))
    override def onComplete(): Unit = finished(sub, None)
  }

  /** Queues an event of the current subscription; whether a waiting reader should be woken ([[FanOutEvents.add]]). */
  private def queued(sub: Sub, event: SubscribeToShardEvent): Boolean = synchronized {
    subs.isCurrent(sub) && !closed && {
      val (continuation, wakes) = events.add(event)
      subs.event(sub, continuation)
      polling.foreach(_.release())
      wakes
    }
  }

  /** A subscription ended: normally (the service's 5 minutes are up), or with an error. */
  private def finished(sub: Sub, error: Option[Throwable]): Unit = {
    synchronized(subs.ended(sub, error, () => events.restartFromOldest()))
    wake()
  }

  override def close(): Unit = {
    val open = synchronized {
      closed = true
      events.clear()
      polling.foreach(_.close())
      subs.close()
    }
    tick.foreach(_.cancel(false))
    open.foreach(_.cancel())
  }
}

private[sparkkinesis] object FanOutShardFetcher {

  /** How long a subscription may deliver nothing before it is renewed (the service sends an event every 5 s). */
  val SilenceMillis = 30000L

  /** Failed subscriptions in a row, with no event between them, before the read fails. */
  val MaxFailures = 12

  /**
   * How long the shard may stay held by another subscription of the same consumer (ResourceInUseException) before
   * the read fails: past the 5 minutes a subscription lives, the holder is a live reader, not a leftover.
   */
  val InUseLimitMillis = 360000L

  /** Events a shard's queue holds at most (each event has at most the records of about one second). */
  val QueuedEvents = 4

  /** What a page says of the shard's lag before the first event: not caught up, for no known time. */
  val UnknownBehindMillis = 1L

  private[fetching] val TickMillis = 1000L

  /** The one timer of the JVM's fan-out fetchers: a daemon thread that only checks times and opens calls. */
  lazy val ticks: ScheduledExecutorService = {
    val pool = new java.util.concurrent.ScheduledThreadPoolExecutor(1, DaemonThreads.factory("kinesis-fan-out-upkeep"))
    pool.setRemoveOnCancelPolicy(true)
    pool
  }

  def startingPosition(p: StartPosition): StartingPosition = {
    val b = StartingPosition.builder()
    p match {
      case StartPosition.TrimHorizon => b.`type`(ShardIteratorType.TRIM_HORIZON)
      case StartPosition.Latest => b.`type`(ShardIteratorType.LATEST)
      case StartPosition.AtTimestamp(ms) =>
        b.`type`(ShardIteratorType.AT_TIMESTAMP).timestamp(java.time.Instant.ofEpochMilli(ms))
      case StartPosition.AtSequence(s) => b.`type`(ShardIteratorType.AT_SEQUENCE_NUMBER).sequenceNumber(s)
      case StartPosition.AfterSequence(s) => b.`type`(ShardIteratorType.AFTER_SEQUENCE_NUMBER).sequenceNumber(s)
    }
    b.build()
  }
}
