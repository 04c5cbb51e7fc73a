package io.sparkkinesis.fetching

import java.util.concurrent.{ScheduledExecutorService, ScheduledFuture, TimeUnit}

import scala.util.control.NonFatal

import io.sparkkinesis.compat.ArrayDeque
import io.sparkkinesis.compat.CollectionConverters._

import org.apache.spark.internal.Logging
import org.reactivestreams.{Subscriber, Subscription}
import software.amazon.awssdk.services.kinesis.model._

import io.sparkkinesis.runtime.DaemonThreads
import io.sparkkinesis.aws.{Backoff, Failure, StreamRef}
import io.sparkkinesis.errors.{KinesisErrors, KinesisException}
import io.sparkkinesis.offsets.StartPosition

/**
 * Reads one shard by enhanced fan-out: a long-lived SubscribeToShard subscription of the query's consumer pushes
 * events into a small queue, and [[fetch]] hands out their records in order, `maxRecordsPerCall` at most per page.
 * The subscription outlives prefetch rounds and batches (the fetcher lives in the executor's shard buffer), so no
 * round waits for a new one.
 *
 * What keeps it going, all in [[maintain]] (run by every [[fetch]] and by a tick of its own each second):
 *  - renewal: the service ends a subscription after 5 minutes; the next one starts after the continuation sequence
 *    number of the last event (empty events included, so a start at `latest` or a timestamp moves on with time);
 *  - at most one SubscribeToShard per second per shard, as the service allows;
 *  - a subscription taken over by another (ResourceInUseException), throttled, or failed in the middle (an I/O
 *    error, a 5xx) is opened again after a backoff, from the same place; `maxFailures` failures in a row without an
 *    event fail the read with [KINESIS_RETRIES_EXHAUSTED]. ResourceInUse is not counted there: a subscription
 *    lives at most 5 minutes, so one still held by another after `inUseLimitMillis` is a second live reader with
 *    the same consumer, named in the failure;
 *  - while the last attempt failed (until the next event), the shard is read with GetRecords through `fallback`,
 *    from the last record handed out, so a shard is never stuck waiting for a subscription (records the next
 *    subscription sends again are dropped, as after any renewal);
 *  - a subscription that stays open but delivers no event for `silenceMillis` while events are asked for (the
 *    service sends one every few seconds even when there are no records) is cancelled and opened again; a full
 *    queue asks for nothing, and its quiet is not silence;
 *  - the shard ends with the event that has no continuation sequence number (the one carrying its child shards),
 *    once every record before it has been handed out: the children are then read after the parent.
 *
 * Nothing blocks the SDK's threads: the subscriber only queues events, and asks for more only while the queue has
 * room (`queuedEvents`), so an executor that is slow to read holds at most that many events per shard. An idle
 * shard costs one event every few seconds and a timestamp check each second. Calls into the SDK (subscribe,
 * request, cancel) are made outside the fetcher's lock. A reader that waits for records (a real-time task) is woken
 * through [[whenReady]] when an event is queued or a subscription ends, and asks [[readyAt]] when to look.
 *
 * A sequence number the service refuses (InvalidArgumentException) is taken as a position trimmed away: with
 * `failOnDataLoss` the read fails with [KINESIS_DATA_LOSS]; without, it goes on from the trim horizon and counts
 * the loss. A consumer or shard the service does not know fails the read at once, named.
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
  import FanOutShardFetcher._

  /** One subscription: its number, the reactive subscription once the SDK gives it, and its events' times. */
  private final class Sub(val number: Long, val openedAt: Long) {
    var subscription: Subscription = _
    var lastEventAt: Long = openedAt
    var askedAt: Long = openedAt
    var requested = 0L
    var events = 0L
  }

  private val queue = ArrayDeque.empty[SubscribeToShardEvent]
  private var current: Option[Sub] = None
  private var subscriptions = 0L
  // Where the next subscription starts: the start, then after each event's continuation sequence number.
  private var resumeFrom: StartPosition = start
  private var lastSequence: Option[String] = None
  private var endQueued = false
  private var ended = false
  private var behind: Option[Long] = None
  private var nextSubscribeAt = Long.MinValue
  private var lastSubscribeAt = Long.MinValue
  private var failuresInARow = 0 // every failed attempt since the last event: backoff and the fallback
  private var hardFailuresInARow = 0 // the same without ResourceInUse: the limit
  private var inUseSince: Option[Long] = None
  private var polling: Option[ShardFetcher] = None
  private var pollCalls = 0L
  private var fatal: Option[Throwable] = None
  private var closed = false
  private var subscribeCalls = 0L
  private var throttledCount = 0L
  private var dataLossCount = 0L
  private var renewed = 0L
  private var failed = 0L
  @volatile private var wake: () => Unit = () => ()
  private val tick: Option[ScheduledFuture[_]] = ticks.map(_.scheduleWithFixedDelay(
      () =>
        try maintain()
        catch { case NonFatal(e) => logWarning(s"Fan-out upkeep of shard $shardId failed: $e") },
      TickMillis, TickMillis, TimeUnit.MILLISECONDS))

  override def calls: Long = synchronized(subscribeCalls + pollCalls)
  override def throttled: Long = synchronized(throttledCount)
  override def dataLoss: Long = synchronized(dataLossCount)
  override def renewals: Long = synchronized(renewed)
  override def subscribeFailures: Long = synchronized(failed)
  override def shardEnded: Boolean = synchronized(ended)
  override def pushed: Boolean = true
  override def broken: Boolean = synchronized(fatal.isDefined)
  override def whenReady(wake: () => Unit): Unit = this.wake = wake

  override def readyAt: Long = synchronized {
    if (fatal.isDefined || queue.nonEmpty || endQueued || closed) Long.MinValue
    else if (fallback.isDefined && failuresInARow > 0) polling.fold(Long.MinValue)(_.readyAt)
    else Long.MaxValue
  }

  /** Subscriptions opened so far (tests). */
  def opened: Long = synchronized(subscriptions)

  override def fetch(patient: Boolean): FetchedPage = {
    require(!shardEnded, s"shard $shardId of $stream has ended")
    maintain()
    pollWhileUnsubscribed(patient).getOrElse(fromQueue())
  }

  private def fromQueue(): FetchedPage = {
    val (page, more) = synchronized {
      fatal.foreach(e => throw e)
      val records = Vector.newBuilder[Record]
      var taken = 0
      var lastBehind = behind
      while (taken < maxRecordsPerCall && queue.nonEmpty) {
        val event = queue.removeHead()
        val fresh =
          event.records().asScala.filter(r => lastSequence.forall(s => BigInt(r.sequenceNumber()) > BigInt(s)))
        val (now, later) = fresh.splitAt(maxRecordsPerCall - taken)
        if (later.nonEmpty) queue.prepend(event.toBuilder.records(later.asJava).build())
        now.foreach { r => records += r; lastSequence = Some(r.sequenceNumber()) }
        taken += now.size
        lastBehind = Option(event.millisBehindLatest()).map(_.longValue()).orElse(lastBehind)
      }
      behind = lastBehind
      if (endQueued && queue.isEmpty) ended = true
      // Until the first event answers, the shard is not known to be caught up (AvailableNow must not stop on it).
      (FetchedPage(records.result(), behind.getOrElse(UnknownBehindMillis), ended), demand())
    }
    more.foreach { case (s, n) => s.request(n) }
    page
  }

  /**
   * A page read with GetRecords while subscribing fails (from the last attempt's failure until the next event), or
   * None when the queue serves. The polling fetcher starts after the last record handed out and is let go once an
   * event arrives.
   */
  private def pollWhileUnsubscribed(patient: Boolean): Option[FetchedPage] = {
    val poller = synchronized {
      fatal.foreach(e => throw e)
      if (fallback.isEmpty || failuresInARow == 0 || queue.nonEmpty || endQueued || closed) None
      else {
        if (polling.isEmpty) {
          val from = lastSequence.map(StartPosition.AfterSequence(_)).getOrElse(resumeFrom)
          logInfo(s"Reading shard $shardId of stream '$stream' with GetRecords ${describe(from)} until a fan-out " +
            "subscription delivers again")
          polling = fallback.map(_(from))
        }
        polling
      }
    }
    poller.map { p =>
      val (calls0, throttled0, loss0) = (p.calls, p.throttled, p.dataLoss)
      val page = p.fetch(patient)
      synchronized {
        pollCalls += p.calls - calls0
        throttledCount += p.throttled - throttled0
        dataLossCount += p.dataLoss - loss0
        val fresh = page.records.filter(r => lastSequence.forall(s => BigInt(r.sequenceNumber()) > BigInt(s)))
        fresh.lastOption.foreach { r =>
          lastSequence = Some(r.sequenceNumber())
          resumeFrom = StartPosition.AfterSequence(r.sequenceNumber())
        }
        behind = Some(page.millisBehindLatest)
        if (page.shardEnded) { endQueued = true; ended = true }
        FetchedPage(fresh, page.millisBehindLatest, ended)
      }
    }
  }

  /** The subscription to ask for `n` more events, when the queue has room for events not yet asked for. */
  private def demand(): Option[(Subscription, Long)] = current.filter(_.subscription != null).flatMap { s =>
    val room = queuedEvents - queue.size - s.requested
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
      if (closed || endQueued || fatal.isDefined) (None, None)
      else {
        // Silent: no answer to SubscribeToShard, or no event for events asked for; a full queue asks for none.
        val silent = current.filter { s =>
          val waitingSince =
            if (s.subscription == null) s.openedAt
            else if (s.requested > 0) math.max(s.lastEventAt, s.askedAt)
            else now
          now - waitingSince > silenceMillis
        }
        silent.foreach { s =>
          logWarning(s"The fan-out subscription to shard $shardId of stream '$stream' delivered no event for " +
            s"${(now - s.lastEventAt) / 1000} s; opening a new one from ${describe(resumeFrom)}")
          current = None
          renewed += 1
        }
        val open = if (current.isEmpty && now >= nextSubscribeAt && queue.size < queuedEvents) {
          val sub = new Sub(subscriptions + 1, now)
          subscriptions += 1
          subscribeCalls += 1
          current = Some(sub)
          lastSubscribeAt = now
          nextSubscribeAt = now + MinSubscribePeriodMillis
          Some((sub, resumeFrom))
        } else None
        (silent.flatMap(s => Option(s.subscription)), open)
      }
    }
    cancel.foreach(_.cancel())
    open.foreach { case (sub, from) => subscribe(sub, from) }
  }

  private def subscribe(sub: Sub, from: StartPosition): Unit = {
    val request = SubscribeToShardRequest.builder().consumerARN(consumerArn).shardId(shardId)
      .startingPosition(startingPosition(from)).build()
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
        if (!current.exists(_ eq sub)) (false, None)
        else { sub.subscription = s; (true, demand()) }
      }
      if (!keep) s.cancel()
      ask.foreach { case (subscription, n) => subscription.request(n) }
    }

    override def onNext(item: SubscribeToShardEventStream): Unit = item match {
      case event: SubscribeToShardEvent => received(sub, event)
      case _ => // another kind of event (none is defined today): ask for the next one
        val ask = FanOutShardFetcher.this.synchronized {
          if (current.exists(_ eq sub)) { sub.requested -= 1; demand() }
          else None
        }
        ask.foreach { case (subscription, n) => subscription.request(n) }
    }

    override def onError(t: Throwable): Unit = finished(sub, Some(t))
    override def onComplete(): Unit = finished(sub, None)
  }

  /**
   * Queues an event, and wakes a waiting reader when it brings records, the shard's end, or fills the queue but one
   * place: an empty event (the service sends them to idle shards too) only moves the position on, and can wait for
   * the reader's next look.
   */
  private def received(sub: Sub, event: SubscribeToShardEvent): Unit =
    if (queued(sub, event)) wake()

  private def queued(sub: Sub, event: SubscribeToShardEvent): Boolean = synchronized {
    val taken = current.exists(_ eq sub) && !closed
    if (taken) {
      sub.requested -= 1
      sub.events += 1
      sub.lastEventAt = clock()
      failuresInARow = 0
      hardFailuresInARow = 0
      inUseSince = None
      polling = None
      queue += event
      Option(event.continuationSequenceNumber()) match {
        case Some(seq) => resumeFrom = StartPosition.AfterSequence(seq)
        case None =>
          // The shard's end: its last event (with the child shards) has no continuation.
          endQueued = true
          current = None
      }
    }
    taken && (!event.records().isEmpty || endQueued || queue.size >= queuedEvents - 1)
  }

  /** A subscription ended: normally (the service's 5 minutes are up), or with an error. */
  private def finished(sub: Sub, error: Option[Throwable]): Unit = {
    subscriptionEnded(sub, error)
    wake()
  }

  private def subscriptionEnded(sub: Sub, error: Option[Throwable]): Unit = synchronized {
    if (current.exists(_ eq sub)) {
      current = None
      val now = clock()
      error.map(Failure.unwrap) match {
        case None =>
          renewed += 1
          logDebug(s"Fan-out subscription to shard $shardId ended after ${sub.events} events; renewing")
        case Some(e: ResourceInUseException) =>
          // Another subscription holds the shard for this consumer; the service lets a new one take over soon, and
          // ends any subscription within 5 minutes: one held longer is another live reader of this consumer.
          renewed += 1
          val since = inUseSince.getOrElse(now)
          inUseSince = Some(since)
          if (now - since > inUseLimitMillis)
            fatal = Some(KinesisErrors.retriesExhausted(
                s"SubscribeToShard on shard $shardId of stream '$stream' " +
                  s"(for ${(now - since) / 1000} s another reader has held this shard with the consumer $consumerArn: " +
                  "give each query its own 'consumerName')", failuresInARow + 1, Seq(Failure.code(e)), e))
          else retryLater(now, e, "is held by another subscription of the consumer", counted = false)
        case Some(e: InvalidArgumentException) if startsAtSequence(resumeFrom) =>
          trimmed(e)
        case Some(e) if Failure.of(e) == Failure.Throttled =>
          throttledCount += 1
          retryLater(now, e, "was throttled (at most one SubscribeToShard per second per shard)")
        case Some(e) if Failure.of(e).retryable || brokenConnection(e) =>
          retryLater(now, e, "failed")
        case Some(e: ResourceNotFoundException) =>
          // The consumer was deregistered by someone else, or the shard is gone: never taken as the shard's end.
          fatal = Some(KinesisErrors.serviceError(s"SubscribeToShard on shard $shardId with consumer $consumerArn",
              stream.toString, e))
        case Some(e) =>
          fatal = Some(Failure.toUserError(e, s"SubscribeToShard on shard $shardId", stream.toString))
      }
    }
  }

  private def retryLater(now: Long, e: Throwable, what: String, counted: Boolean = true): Unit = {
    failed += 1
    failuresInARow += 1
    if (counted) hardFailuresInARow += 1
    if (hardFailuresInARow > maxFailures) {
      fatal = Some(KinesisErrors.retriesExhausted(s"SubscribeToShard on shard $shardId of stream '$stream'",
          hardFailuresInARow, Seq(Failure.code(e)), e))
    } else {
      val wait = backoff.delayMillis(failuresInARow - 1)
      nextSubscribeAt = math.max(nextSubscribeAt, now + wait)
      logInfo(s"The fan-out subscription to shard $shardId of stream '$stream' $what " +
        s"(${Failure.code(e)}); opening a new one in $wait ms")
    }
  }

  /** The service refused the sequence number to start from: the records there are gone (retention). */
  private def trimmed(e: Throwable): Unit = {
    val detail = s"the service refused to start a subscription ${describe(resumeFrom)} (the records there were " +
      s"trimmed by the stream's retention period): ${KinesisErrors.safeMessage(e).take(300)}"
    if (failOnDataLoss) fatal = Some(KinesisErrors.dataLoss(s"shard $shardId of stream '$stream'", detail))
    else {
      logWarning(s"Data loss on shard $shardId of stream '$stream': $detail. Going on from the oldest record " +
        "(failOnDataLoss=false).")
      dataLossCount += 1
      resumeFrom = StartPosition.TrimHorizon
      lastSequence = None
    }
  }

  override def close(): Unit = {
    val open = synchronized {
      closed = true
      queue.clear()
      polling.foreach(_.close())
      polling = None
      val s = current
      current = None
      s
    }
    tick.foreach(_.cancel(false))
    open.flatMap(s => Option(s.subscription)).foreach(_.cancel())
  }

  private def describe(p: StartPosition): String = p match {
    case StartPosition.AfterSequence(s) => s"after sequence number $s"
    case StartPosition.AtSequence(s) => s"at sequence number $s"
    case other => s"at $other"
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

  /** The service allows one SubscribeToShard per second per shard and consumer. */
  val MinSubscribePeriodMillis = 1000L

  /** What a page says of the shard's lag before the first event: not caught up, for no known time. */
  val UnknownBehindMillis = 1L

  private val TickMillis = 1000L

  /** The one timer of the JVM's fan-out fetchers: a daemon thread that only checks times and opens calls. */
  lazy val ticks: ScheduledExecutorService = {
    val pool = new java.util.concurrent.ScheduledThreadPoolExecutor(1, DaemonThreads.factory("kinesis-fan-out-upkeep"))
    pool.setRemoveOnCancelPolicy(true)
    pool
  }

  private def startsAtSequence(p: StartPosition): Boolean = p match {
    case _: StartPosition.AtSequence | _: StartPosition.AfterSequence => true
    case _ => false
  }

  /**
   * A subscription's connection broke or timed out (an I/O error anywhere in the causes, the SDK's call timeout):
   * opened again like a transient failure.
   */
  private def brokenConnection(e: Throwable): Boolean =
    Iterator.iterate(e)(_.getCause).takeWhile(_ != null).take(10).exists {
      case _: java.io.IOException | _: java.util.concurrent.TimeoutException => true
      case t => t.getClass.getSimpleName.contains("Timeout")
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
