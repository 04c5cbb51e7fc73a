package io.sparkkinesis.fetching

import org.apache.spark.internal.Logging
import org.reactivestreams.Subscription
import software.amazon.awssdk.services.kinesis.model._

import io.sparkkinesis.aws.{Backoff, Failure, StreamRef}
import io.sparkkinesis.errors.KinesisErrors
import io.sparkkinesis.offsets.StartPosition

/**
 * The life of one shard's fan-out subscriptions, one after another: when the next may be opened and from where, which
 * one is current, when it has gone silent, and what its end means. Decides only; the calls to the service are
 * [[FanOutShardFetcher]]'s, made outside its lock, which guards this too (not thread-safe by itself).
 *
 *  - renewal: the service ends a subscription after 5 minutes; the next one starts after the continuation sequence
 *    number of the last event (empty events included, so a start at `latest` or a timestamp moves on with time);
 *  - at most one SubscribeToShard per second per shard, as the service allows;
 *  - a subscription taken over by another (ResourceInUseException), throttled, or failed in the middle (an I/O
 *    error, a 5xx) is opened again after a backoff, from the same place; `maxFailures` failures in a row without an
 *    event fail the read with [KINESIS_RETRIES_EXHAUSTED]. ResourceInUse is not counted there: a subscription lives
 *    at most 5 minutes, so one still held by another after `inUseLimitMillis` is a second live reader with the same
 *    consumer, named in the failure;
 *  - a subscription that stays open but delivers no event for `silenceMillis` while events are asked for (the
 *    service sends one every few seconds even when there are no records) is given up and opened again; a full
 *    queue asks for nothing, and its quiet is not silence;
 *  - a sequence number the service refuses (InvalidArgumentException) is a position trimmed away: with
 *    `failOnDataLoss` the read fails with [KINESIS_DATA_LOSS]; without, it goes on from the trim horizon and counts
 *    the loss. A consumer or shard the service does not know fails the read at once, named.
 */
private[fetching] final class FanOutSubscriptions(
    consumerArn: String,
    stream: StreamRef,
    shardId: String,
    start: StartPosition,
    failOnDataLoss: Boolean,
    silenceMillis: Long,
    maxFailures: Int,
    inUseLimitMillis: Long,
    backoff: Backoff,
    clock: () => Long) extends Logging {
  import FanOutSubscriptions._

  private var current: Option[Sub] = None
  private var opened = 0L
  // Where the next subscription starts: the start, then after each event's continuation sequence number.
  private var resumeFrom: StartPosition = start
  private var nextOpenAt = Long.MinValue
  private var failuresInARow = 0 // every failed attempt since the last event: backoff and the fallback
  private var hardFailuresInARow = 0 // the same without ResourceInUse: the limit
  private var inUseSince: Option[Long] = None
  private var fatalError: Option[Throwable] = None
  private var renewedCount = 0L
  private var failedCount = 0L
  private var throttledCount = 0L
  private var lossCount = 0L

  def subscriptionsOpened: Long = opened
  def renewed: Long = renewedCount
  def failed: Long = failedCount
  def throttled: Long = throttledCount
  def dataLoss: Long = lossCount
  def fatal: Option[Throwable] = fatalError

  /** Whether the last attempt failed (no event since): the shard is read by the GetRecords fallback meanwhile. */
  def failing: Boolean = failuresInARow > 0

  /** Where the next subscription starts. */
  def position: StartPosition = resumeFrom

  /** Records up to `sequence` were handed out another way (the fallback): the next subscription starts after it. */
  def resumeAfter(sequence: String): Unit = resumeFrom = StartPosition.AfterSequence(sequence)

  /** Whether `sub` is the current subscription (events of an earlier one are dropped). */
  def isCurrent(sub: Sub): Boolean = current.exists(_ eq sub)

  /** The current subscription, once the SDK gave it its reactive subscription (to ask for events). */
  def live: Option[Sub] = current.filter(_.subscription != null)

  /**
   * Gives up a silent current subscription: no answer to SubscribeToShard, or no event for events asked for. Returns
   * the reactive subscription to cancel.
   */
  def dropSilent(now: Long): Option[Subscription] = current.filter { s =>
    val waitingSince =
      if (s.subscription == null) s.openedAt
      else if (s.requested > 0) math.max(s.lastEventAt, s.askedAt)
      else now
    now - waitingSince > silenceMillis
  }.flatMap { s =>
    logWarning(s"The fan-out subscription to shard $shardId of stream '$stream' delivered no event for " +
      s"${(now - s.lastEventAt) / 1000} s; opening a new one from ${describe(resumeFrom)}")
    current = None
    renewedCount += 1
    Option(s.subscription)
  }

  /** A new subscription to open now, with where it starts, when none is current and one is due. */
  def openIfDue(now: Long, queueHasRoom: Boolean): Option[(Sub, StartPosition)] =
    if (current.isDefined || now < nextOpenAt || !queueHasRoom) None
    else {
      opened += 1
      val sub = new Sub(opened, now)
      current = Some(sub)
      nextOpenAt = now + MinSubscribePeriodMillis
      Some((sub, resumeFrom))
    }

  /** An event of the current subscription came: failures are over; it goes on after `continuation` (None: the end). */
  def event(sub: Sub, continuation: Option[String]): Unit = {
    sub.requested -= 1
    sub.events += 1
    sub.lastEventAt = clock()
    failuresInARow = 0
    hardFailuresInARow = 0
    inUseSince = None
    continuation match {
      case Some(seq) => resumeFrom = StartPosition.AfterSequence(seq)
      case None => current = None // the shard's end: no subscription after it
    }
  }

  /**
   * The subscription ended: normally (the service's 5 minutes are up; renewed), or with an error, which is retried
   * after a backoff, taken as a trimmed position (`trimmed` then runs, unless the read fails), or fatal.
   */
  def ended(sub: Sub, error: Option[Throwable], trimmed: () => Unit): Unit = if (isCurrent(sub)) {
    current = None
    val now = clock()
    error.map(Failure.unwrap) match {
      case None =>
        renewedCount += 1
        logDebug(s"Fan-out subscription to shard $shardId ended after ${sub.events} events; renewing")
      case Some(e: ResourceInUseException) =>
        // Another subscription holds the shard for this consumer; the service lets a new one take over soon, and
        // ends any subscription within 5 minutes: one held longer is another live reader of this consumer.
        renewedCount += 1
        val since = inUseSince.getOrElse(now)
        inUseSince = Some(since)
        if (now - since > inUseLimitMillis)
          fatalError = Some(KinesisErrors.retriesExhausted(
              s"SubscribeToShard on shard $shardId of stream '$stream' " +
                s"(for ${(now - since) / 1000} s another reader has held this shard with the consumer $consumerArn: " +
                "give each query its own 'consumerName')", failuresInARow + 1, Seq(Failure.code(e)), e))
        else retryLater(now, e, "is held by another subscription of the consumer", counted = false)
      case Some(e: InvalidArgumentException) if startsAtSequence(resumeFrom) =>
        trimmedAway(e, trimmed)
      case Some(e) if Failure.of(e) == Failure.Throttled =>
        throttledCount += 1
        retryLater(now, e, "was throttled (at most one SubscribeToShard per second per shard)")
      case Some(e) if Failure.of(e).retryable || brokenConnection(e) =>
        retryLater(now, e, "failed")
      case Some(e: ResourceNotFoundException) =>
        // The consumer was deregistered by someone else, or the shard is gone: never taken as the shard's end.
        fatalError = Some(KinesisErrors.serviceError(
            s"SubscribeToShard on shard $shardId with consumer $consumerArn", stream.toString, e))
      case Some(e) =>
        fatalError = Some(Failure.toUserError(e, s"SubscribeToShard on shard $shardId", stream.toString))
    }
  }

  /** Lets go of the current subscription for good; returns the reactive subscription to cancel. */
  def close(): Option[Subscription] = {
    val s = current
    current = None
    s.flatMap(c => Option(c.subscription))
  }

  private def retryLater(now: Long, e: Throwable, what: String, counted: Boolean = true): Unit = {
    failedCount += 1
    failuresInARow += 1
    if (counted) hardFailuresInARow += 1
    if (hardFailuresInARow > maxFailures) {
      fatalError = Some(KinesisErrors.retriesExhausted(s"SubscribeToShard on shard $shardId of stream '$stream'",
          hardFailuresInARow, Seq(Failure.code(e)), e))
    } else {
      val wait = backoff.delayMillis(failuresInARow - 1)
      nextOpenAt = math.max(nextOpenAt, now + wait)
      logInfo(s"The fan-out subscription to shard $shardId of stream '$stream' $what " +
        s"(${Failure.code(e)}); opening a new one in $wait ms")
    }
  }

  /** The service refused the sequence number to start from: the records there are gone (retention). */
  private def trimmedAway(e: Throwable, trimmed: () => Unit): Unit = {
    val detail = s"the service refused to start a subscription ${describe(resumeFrom)} (the records there were " +
      s"trimmed by the stream's retention period): ${KinesisErrors.safeMessage(e).take(300)}"
    if (failOnDataLoss) fatalError = Some(KinesisErrors.dataLoss(s"shard $shardId of stream '$stream'", detail))
    else {
      logWarning(s"Data loss on shard $shardId of stream '$stream': $detail. Going on from the oldest record " +
        "(failOnDataLoss=false).")
      lossCount += 1
      resumeFrom = StartPosition.TrimHorizon
      trimmed()
    }
  }
}

private[fetching] object FanOutSubscriptions {

  /** The service allows one SubscribeToShard per second per shard and consumer. */
  val MinSubscribePeriodMillis = 1000L

  /** One subscription: its number, the reactive subscription once the SDK gives it, and its events' times. */
  final class Sub(val number: Long, val openedAt: Long) {
    var subscription: Subscription = _
    var lastEventAt: Long = openedAt
    var askedAt: Long = openedAt
    var requested = 0L
    var events = 0L
  }

  def describe(p: StartPosition): String = p match {
    case StartPosition.AfterSequence(s) => s"after sequence number $s"
    case StartPosition.AtSequence(s) => s"at sequence number $s"
    case other => s"at $other"
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
}
