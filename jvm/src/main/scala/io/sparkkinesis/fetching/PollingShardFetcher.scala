package io.sparkkinesis.fetching

import io.sparkkinesis.compat.CollectionConverters._

import org.apache.spark.internal.Logging
import software.amazon.awssdk.services.kinesis.KinesisClient
import software.amazon.awssdk.services.kinesis.model._

import io.sparkkinesis.aws.{Backoff, Contact, Failure, RetryPolicy, StreamRef}
import io.sparkkinesis.errors.{Condition, KinesisErrors, KinesisException}
import io.sparkkinesis.offsets.StartPosition

/**
 * Reads one shard with GetRecords. It asks for its client on every call (`client`: the JVM's cache, which may
 * replace a client it closed) and keeps the shard iterator between calls, spaces calls at least
 * `minPeriodMillis` apart whatever they returned (the service allows 5 reads per second per shard), retries
 * throttling and transient errors under the connector's [[RetryPolicy]], and renews an expired iterator from the
 * last sequence number it returned, so no record is skipped or repeated.
 *
 * A sequence number the service refuses (InvalidArgumentException) is checked against the shard's trim horizon:
 * when the oldest record still in the shard comes after it, the records in between were trimmed by retention.
 * That is data loss: with `failOnDataLoss` the read fails with [KINESIS_DATA_LOSS]; without, it is logged,
 * counted in `dataLoss` and reading goes on from the trim horizon.
 *
 * Two more ways records are lost are caught here (docs/design.md, "Data loss"):
 *  - a live iterator whose position retention trimmed: the service answers it with empty pages while
 *    MillisBehindLatest says records are waiting, without end. After a few such pages in a row the fetcher checks
 *    its position against the oldest record still in the shard (then less often while the check finds nothing);
 *  - a shard the service no longer knows (ResourceNotFoundException) while its stream still exists (ListShards on
 *    the stream answers): a closed shard deleted once its records passed the retention period. The shard's
 *    unread records are lost; with `failOnDataLoss=false` the shard is taken as ended.
 */
private[sparkkinesis] final class PollingShardFetcher(
    client: () => KinesisClient,
    stream: StreamRef,
    shardId: String,
    start: StartPosition,
    maxRecordsPerCall: Int,
    minPeriodMillis: Long,
    failOnDataLoss: Boolean = true,
    contact: Option[Contact] = None,
    clock: () => Long = () => System.currentTimeMillis(),
    sleep: Long => Unit = Thread.sleep) extends ShardFetcher with Logging {
  import PollingShardFetcher._

  private var iterator: Option[String] = None
  private var lastSequence: Option[String] = None
  private var lastCallAt: Long = Long.MinValue
  private var ended = false
  private val policy = PollingShardFetcher.retryPolicy(minPeriodMillis, contact)
  // Single calls (iterators, the oldest record) under the default policy, for the same endpoint; within an impatient
  // fetch they too fail at once instead of backing off in place.
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
        val response =
          client()
            .getRecords(GetRecordsRequest.builder().shardIterator(it).limit(math.min(limit, maxRecordsPerCall)).build())
        val records = response.records().asScala.toSeq
        records.lastOption.foreach(r => lastSequence = Some(r.sequenceNumber()))
        iterator = Option(response.nextShardIterator())
        ended = iterator.isEmpty
        FetchedPage(records, Option(response.millisBehindLatest()).map(_.longValue()).getOrElse(0L), ended)
      }
      if (page.records.isEmpty && page.millisBehindLatest > 0 && !page.shardEnded) emptyBehind += 1
      else { emptyBehind = 0; stuckCheckAfter = StuckCheckFirst }
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

  /** Where the next record is read from, for messages. */
  private def position: String =
    lastSequence.map(s => s"after sequence number $s").getOrElse(start match {
      case StartPosition.AtSequence(s) => s"at sequence number $s"
      case StartPosition.AfterSequence(s) => s"after sequence number $s"
      case other => s"not started (to begin at $other)"
    })

  /** The sequence number the next record must follow (or be, for AT_SEQUENCE_NUMBER), once one is known. */
  private def anchor: Option[String] = lastSequence.orElse(start match {
    case StartPosition.AtSequence(s) => Some(s)
    case StartPosition.AfterSequence(s) => Some(s)
    case _ => None
  })

  /**
   * Empty pages keep coming while the shard is behind: the service answers so an iterator whose position was
   * trimmed. When the oldest record left comes after the position, that is data loss; otherwise the pages were
   * only sparse and reading goes on. A position not yet tied to a record (trim horizon, a timestamp) cannot lose
   * records: its iterator is renewed from the same start.
   */
  private def checkPositionNotTrimmed(): Unit = anchor match {
    case None if start != StartPosition.Latest => iterator = None
    case None => ()
    case Some(seq) =>
      val oldest = oldestSequence()
      if (oldest.exists(o => BigInt(o) > BigInt(seq))) {
        val detail = s"the query's position ($position) was trimmed while it read the shard: the service answers " +
          s"it with no records while the shard is behind, and the oldest record still in the shard is ${oldest.get}"
        lost(detail)
        lastSequence = None
        iterator = Some(shardIterator(StartPosition.TrimHorizon))
      }
  }

  /** Fails the read with [KINESIS_DATA_LOSS], or (failOnDataLoss=false) logs and counts the loss. */
  private def lost(detail: String, next: String = "Going on from the oldest record"): Unit = {
    if (failOnDataLoss) {
      failure = Some(KinesisErrors.dataLoss(s"shard $shardId of stream '$stream'", detail))
      throw failure.get
    }
    logWarning(s"Data loss on shard $shardId of stream '$stream': $detail. $next (failOnDataLoss=false).")
    dataLossCount += 1
  }

  /** Whether the stream itself exists: ListShards on it answers (the one call readers need besides reading). */
  private def streamExists(): Boolean = {
    val b = ListShardsRequest.builder().maxResults(1)
    stream.arn.fold(b.streamName(stream.name))(b.streamARN)
    try { singleCalls.call("ListShards", stream.toString)(client().listShards(b.build())); true }
    catch { case e: KinesisException if e.is(Condition.StreamNotFound) => false }
  }

  /** The service no longer knows the shard of a stream that exists: its unread records are gone. */
  private def shardGone(e: KinesisException): FetchedPage = {
    lost(
      s"the shard no longer exists, while the stream does (a closed shard is deleted once its records pass the " +
        s"stream's retention period); the query's position is $position. The service said: " +
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

  private def newIterator(): String = {
    val position = lastSequence.map(StartPosition.AfterSequence).getOrElse(start)
    position match {
      case StartPosition.AtSequence(seq) => iteratorOrTrimHorizon(position, seq)
      case StartPosition.AfterSequence(seq) => iteratorOrTrimHorizon(position, seq)
      case _ => shardIterator(position)
    }
  }

  private def iteratorOrTrimHorizon(position: StartPosition, seq: String): String =
    try shardIterator(position)
    catch {
      // The policy turned the refusal (InvalidArgumentException) into a [KINESIS_SERVICE_ERROR] already.
      case e: KinesisException if e.getCause.isInstanceOf[InvalidArgumentException] =>
        val oldest = oldestSequence()
        if (!oldest.forall(o => BigInt(o) > BigInt(seq))) throw e
        lost(s"the query's position (sequence number $seq) is older than the oldest record still in the " +
          oldest.fold("shard (none is left)")(o => s"shard ($o)"))
        lastSequence = None
        shardIterator(StartPosition.TrimHorizon)
    }

  /** The sequence number of the oldest record in the shard (None when it holds none), with a few calls at most. */
  private def oldestSequence(): Option[String] = {
    var it: Option[String] = Some(shardIterator(StartPosition.TrimHorizon))
    var probes = 0
    while (it.isDefined && probes < OldestProbeCalls) {
      probes += 1
      val response = singleCalls.call("GetRecords", stream.toString)(
        client().getRecords(GetRecordsRequest.builder().shardIterator(it.get).limit(1).build()))
      val first = response.records().asScala.headOption
      if (first.isDefined) return first.map(_.sequenceNumber())
      if (Option(response.millisBehindLatest()).forall(_ == 0L)) return None
      it = Option(response.nextShardIterator())
    }
    None
  }

  private def shardIterator(position: StartPosition): String = {
    val b = GetShardIteratorRequest.builder().shardId(shardId)
    stream.arn.fold(b.streamName(stream.name))(b.streamARN)
    position match {
      case StartPosition.TrimHorizon => b.shardIteratorType(ShardIteratorType.TRIM_HORIZON)
      case StartPosition.Latest => b.shardIteratorType(ShardIteratorType.LATEST)
      case StartPosition.AtTimestamp(ms) =>
        b.shardIteratorType(ShardIteratorType.AT_TIMESTAMP).timestamp(java.time.Instant.ofEpochMilli(ms))
      case StartPosition.AtSequence(s) =>
        b.shardIteratorType(ShardIteratorType.AT_SEQUENCE_NUMBER).startingSequenceNumber(s)
      case StartPosition.AfterSequence(s) =>
        b.shardIteratorType(ShardIteratorType.AFTER_SEQUENCE_NUMBER).startingSequenceNumber(s)
    }
    singleCalls.call("GetShardIterator", stream.toString)(client().getShardIterator(b.build())).shardIterator()
  }
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
