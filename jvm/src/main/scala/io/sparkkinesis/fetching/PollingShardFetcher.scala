package io.sparkkinesis.fetching

import org.apache.spark.internal.Logging

import io.sparkkinesis.aws.{Backoff, Contact, Failure, RetryPolicy}
import io.sparkkinesis.errors.{Condition, KinesisErrors, KinesisException}
import io.sparkkinesis.offsets.StartPosition

/**
 * Reads one shard with GetRecords, of Kinesis or of a DynamoDB stream: what the two services do differently (their
 * clients and requests, their records, how they say a position was trimmed) is `shard`'s ([[ShardCalls]]), the rest is
 * here. The fetcher keeps the shard iterator between calls, spaces calls at least `minPeriodMillis` apart whatever they
 * returned (Kinesis allows 5 reads per second per shard), retries throttling and transient errors under the
 * connector's [[RetryPolicy]], and renews an expired iterator from the last sequence number it returned, so no record
 * is skipped or repeated. A start the service has no iterator for (DynamoDB Streams at a time) is read from the trim
 * horizon, and the records created before it are skipped ([[ShardCalls.skipBefore]]).
 *
 * A position the service refuses as trimmed by retention ([[ShardCalls.trimmed]]; for Kinesis, when the oldest record
 * still in the shard comes after it) is data loss: with `failOnDataLoss` the read fails with [KINESIS_DATA_LOSS];
 * without, it is logged, counted in `dataLoss` and reading goes on from the trim horizon: in the same call when the
 * refusal was of a new iterator, from the next call when it was of GetRecords (the call answers no records).
 *
 * Two more ways records are lost are caught here (docs/design.md, "Data loss"):
 *  - a live iterator whose position retention trimmed, which Kinesis answers with empty pages while
 *    MillisBehindLatest says records are waiting, without end. After a few such pages in a row the fetcher checks
 *    its position against the oldest record still in the shard (then less often while the check finds nothing);
 *  - a shard the service no longer knows (not found) while its stream still exists ([[ShardCalls.lookUpStream]]
 *    answers): a closed shard deleted once its records passed the retention period. The shard's unread records are
 *    lost; with `failOnDataLoss=false` the shard is taken as ended.
 */
private[sparkkinesis] final class PollingShardFetcher(
    shard: ShardCalls,
    start: StartPosition,
    maxRecordsPerCall: Int,
    minPeriodMillis: Long,
    failOnDataLoss: Boolean = true,
    contact: Option[Contact] = None,
    clock: () => Long = () => System.currentTimeMillis(),
    sleep: Long => Unit = Thread.sleep) extends ShardFetcher with Logging {
  import PollingShardFetcher._
  import shard.{shardId, stream}

  private var iterator: Option[String] = None
  // Where reading goes on from while no record has been returned: `start`, or the trim horizon after a loss.
  private var from: StartPosition = start
  private var lastSequence: Option[String] = None
  // Records created before this time are skipped, until one is kept.
  private var notBefore: Option[Long] = shard.skipBefore(start)
  private var lastCallAt: Long = Long.MinValue
  private var ended = false
  private val policy = PollingShardFetcher.retryPolicy(minPeriodMillis, contact)
  // Single calls (iterators, the oldest record, the stream) under the default policy, for the same endpoint; within
  // an impatient fetch they too fail at once instead of backing off in place.
  private val patientSingleCalls = RetryPolicy.Default.copy(contact = contact)
  private var singleCalls = patientSingleCalls
  private var callCount = 0L
  private var throttledCount = 0L
  private var dataLossCount = 0L
  // Empty pages in a row while MillisBehindLatest > 0, and how many of them trigger a check of the position.
  private var emptyBehind = 0
  private var stuckCheckAfter = StuckCheckFirst
  // A loss found with failOnDataLoss: every later call fails with it too, whichever thread makes it (a read-ahead
  // loop that meets it first drops its failure; the next prefetch round must still see it).
  private var failure: Option[KinesisException] = None

  override def calls: Long = callCount
  override def throttled: Long = throttledCount
  override def dataLoss: Long = dataLossCount
  override def broken: Boolean = failure.isDefined
  override def shardEnded: Boolean = ended
  override def readyAt: Long = if (lastCallAt == Long.MinValue) Long.MinValue else lastCallAt + minPeriodMillis

  override def fetch(patient: Boolean): FetchedPage = fetch(patient, maxRecordsPerCall)

  override def fetch(patient: Boolean, limit: Int): FetchedPage = {
    require(!ended, s"shard $shardId of $stream has ended")
    failure.foreach(e => throw e)
    singleCalls = if (patient) patientSingleCalls else patientSingleCalls.copy(maxRetries = 0)
    try {
      val page = (if (patient) policy else policy.copy(maxRetries = 0)).call(s"GetRecords on shard $shardId",
        stream.toString,
        // Renewed from lastSequence on the next try; not counted against the retry budget.
        handled = { case Failure.ExpiredIterator => iterator = None },
        onRetry = f => if (f == Failure.Throttled) throttledCount += 1,
        sleep = sleep) {
        pace()
        val it = iterator.getOrElse(newIterator())
        callCount += 1
        try take(shard.getRecords(it, math.max(1, math.min(limit, maxRecordsPerCall))))
        catch {
          case e: Exception =>
            goOnFromTrimHorizon(trimmedAway(e).getOrElse(throw e))
            FetchedPage(Seq.empty, 1L, shardEnded = false)
        }
      }
      if (emptyBehind >= stuckCheckAfter) {
        emptyBehind = 0
        stuckCheckAfter = math.min(stuckCheckAfter * 2, StuckCheckMax)
        checkPositionNotTrimmed()
      }
      page
    } catch {
      case e: KinesisException if e.is(Condition.StreamNotFound) && streamExists() => shardGone(e)
      // An impatient call gives up on its first throttled answer; it still counts as throttled.
      case e: KinesisException
          if !patient && e.is(Condition.RetriesExhausted) &&
            Option(e.getCause).exists(c => Failure.of(c) == Failure.Throttled) =>
        throttledCount += 1
        throw e
    }
  }

  /**
   * A page of the service as the fetcher returns it: notes where the next call reads from and whether the page came
   * empty while behind, and keeps the records not skipped.
   */
  private def take(page: ShardCalls.Page): FetchedPage = {
    page.records.lastOption.foreach(r => lastSequence = Some(r.sequenceNumber()))
    iterator = page.next
    ended = iterator.isEmpty
    if (page.records.isEmpty && page.millisBehindLatest > 0 && !ended) emptyBehind += 1
    else { emptyBehind = 0; stuckCheckAfter = StuckCheckFirst }
    val records = notBefore.fold(page.records) { time =>
      val kept = page.records.dropWhile(r => Option(r.approximateArrivalTimestamp()).exists(_.toEpochMilli < time))
      if (kept.nonEmpty || ended) notBefore = None
      kept
    }
    FetchedPage(records, page.millisBehindLatest, ended)
  }

  /** Where the next record is read from, for messages. */
  private def position: String =
    lastSequence.map(s => s"after sequence number $s").getOrElse(from match {
      case StartPosition.AtSequence(s) => s"at sequence number $s"
      case StartPosition.AfterSequence(s) => s"after sequence number $s"
      case other => s"not started (to begin at $other)"
    })

  /** The sequence number the next record must follow (or be, for AT_SEQUENCE_NUMBER), once one is known. */
  private def anchor: Option[String] = lastSequence.orElse(from match {
    case StartPosition.AtSequence(s) => Some(s)
    case StartPosition.AfterSequence(s) => Some(s)
    case _ => None
  })

  /**
   * Empty pages keep coming while the shard is behind: Kinesis answers so an iterator whose position was trimmed.
   * When the oldest record left comes after the position, that is data loss; otherwise the pages were only sparse and
   * reading goes on. A position not yet tied to a record (trim horizon, a timestamp) cannot lose records: its
   * iterator is renewed from the same start.
   */
  private def checkPositionNotTrimmed(): Unit = anchor match {
    case None if from != StartPosition.Latest => iterator = None
    case None => ()
    case Some(seq) =>
      val oldest = oldestSequence()
      if (oldest.exists(o => BigInt(o) > BigInt(seq)))
        goOnFromTrimHorizon(s"the query's position ($position) was trimmed while it read the shard: the service " +
          s"answers it with no records while the shard is behind, and the oldest record still in the shard is " +
          oldest.get)
  }

  /**
   * The data-loss message when `refusal` (of GetShardIterator or GetRecords) says retention trimmed the position away
   * ([[ShardCalls.trimmed]]). The check the service may ask for reads the oldest record still in the shard: the
   * position was trimmed when that record comes after it, or when none is left.
   */
  private def trimmedAway(refusal: Throwable): Option[String] =
    shard.trimmed(refusal,
      anchor.flatMap { seq =>
        val oldest = oldestSequence()
        if (oldest.exists(o => BigInt(o) <= BigInt(seq))) None
        else Some("the oldest record still in the " + oldest.fold("shard (none is left)")(o => s"shard ($o)"))
      }).map(what => s"the query's position ($position) is older than $what")

  /** A loss of the records before the trim horizon: fails the read, or counts it and reads on from there. */
  private def goOnFromTrimHorizon(detail: String): Unit = {
    lost(detail)
    lastSequence = None
    from = StartPosition.TrimHorizon
    iterator = None
  }

  /** Fails the read with [KINESIS_DATA_LOSS], or (failOnDataLoss=false) logs and counts the loss. */
  private def lost(detail: String, next: String = "Going on from the oldest record"): Unit = {
    val where = s"shard $shardId of ${shard.streamKind} '$stream'"
    if (failOnDataLoss) {
      failure = Some(KinesisErrors.dataLoss(where, detail))
      throw failure.get
    }
    logWarning(s"Data loss on $where: $detail. $next (failOnDataLoss=false).")
    dataLossCount += 1
  }

  /** Whether the stream itself exists: the service answers [[ShardCalls.lookUpStream]]. */
  private def streamExists(): Boolean =
    try { singleCalls.call(shard.streamLookup, stream.toString)(shard.lookUpStream()); true }
    catch { case e: KinesisException if e.is(Condition.StreamNotFound) => false }

  /** The service no longer knows the shard of a stream that exists: its unread records are gone. */
  private def shardGone(e: KinesisException): FetchedPage = {
    lost(
      s"the shard no longer exists, while the stream does (a closed shard is deleted once its records pass " +
        s"${shard.retention}); the query's position is $position. The service said: " +
        KinesisErrors.safeMessage(e.getCause).take(300), next = "Taking the shard as ended")
    ended = true
    iterator = None
    FetchedPage(Seq.empty, 0L, shardEnded = true)
  }

  private def pace(): Unit = {
    if (lastCallAt != Long.MinValue) {
      val wait = lastCallAt + minPeriodMillis - clock()
      if (wait > 0) sleep(wait)
    }
    lastCallAt = clock()
  }

  /** An iterator where reading goes on; at the trim horizon when the service refuses that position as trimmed. */
  private def newIterator(): String =
    try shardIterator(lastSequence.map(StartPosition.AfterSequence).getOrElse(from))
    catch {
      case e: KinesisException =>
        goOnFromTrimHorizon(trimmedAway(e.getCause).getOrElse(throw e))
        shardIterator(StartPosition.TrimHorizon)
    }

  /** The sequence number of the oldest record in the shard (None when it holds none), with a few calls at most. */
  private def oldestSequence(): Option[String] = {
    var it: Option[String] = Some(shardIterator(StartPosition.TrimHorizon))
    var probes = 0
    while (it.isDefined && probes < OldestProbeCalls) {
      probes += 1
      val page = singleCalls.call("GetRecords", stream.toString)(shard.getRecords(it.get, 1))
      if (page.records.nonEmpty) return Some(page.records.head.sequenceNumber())
      if (page.millisBehindLatest == 0L) return None
      it = page.next
    }
    None
  }

  private def shardIterator(position: StartPosition): String =
    singleCalls.call("GetShardIterator", stream.toString)(shard.shardIterator(position))
}

private[sparkkinesis] object PollingShardFetcher {

  /**
   * How GetRecords calls are retried (in place by a patient fetch, by a real-time task between its looks): the
   * first retry after about one call period (at least 200 ms), doubling from there, under the default budget.
   */
  def retryPolicy(minPeriodMillis: Long, contact: Option[Contact]): RetryPolicy =
    RetryPolicy(backoff = Backoff(baseMillis = 2 * math.max(minPeriodMillis, 100)), contact = contact)

  /** GetRecords calls spent looking for the oldest record of a shard (empty pages may precede it). */
  private val OldestProbeCalls = 10

  /** Empty pages in a row, while the shard is behind, before the position is checked; doubled up to the max. */
  private val StuckCheckFirst = 5
  private val StuckCheckMax = 80
}
