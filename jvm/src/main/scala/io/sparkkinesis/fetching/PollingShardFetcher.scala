package io.sparkkinesis.fetching

import scala.jdk.CollectionConverters._

import org.apache.spark.internal.Logging
import software.amazon.awssdk.services.kinesis.KinesisClient
import software.amazon.awssdk.services.kinesis.model._

import io.sparkkinesis.aws.{Backoff, Contact, Failure, RetryPolicy, StreamRef}
import io.sparkkinesis.errors.{KinesisErrors, KinesisException}
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
  // The first retry waits about one call period (at least 200 ms), doubling from there.
  private val policy =
    RetryPolicy(backoff = Backoff(baseMillis = 2 * math.max(minPeriodMillis, 100)), contact = contact)
  // Single calls (iterators, the oldest record) under the default policy, for the same endpoint.
  private val singleCalls = RetryPolicy.Default.copy(contact = contact)
  private var callCount = 0L
  private var throttledCount = 0L
  private var dataLossCount = 0L

  override def calls: Long = callCount
  override def throttled: Long = throttledCount
  override def dataLoss: Long = dataLossCount
  override def shardEnded: Boolean = ended

  override def fetch(patient: Boolean): FetchedPage = {
    require(!ended, s"shard $shardId of $stream has ended")
    (if (patient) policy else policy.copy(maxRetries = 0)).call(s"GetRecords on shard $shardId", stream.toString,
      // Renewed from lastSequence on the next try; not counted against the retry budget.
      handled = { case Failure.ExpiredIterator => iterator = None },
      onRetry = f => if (f == Failure.Throttled) throttledCount += 1,
      sleep = sleep) {
      pace()
      val it = iterator.getOrElse(newIterator())
      callCount += 1
      val response = client().getRecords(GetRecordsRequest.builder().shardIterator(it).limit(maxRecordsPerCall).build())
      val records = response.records().asScala.toSeq
      records.lastOption.foreach(r => lastSequence = Some(r.sequenceNumber()))
      iterator = Option(response.nextShardIterator())
      ended = iterator.isEmpty
      FetchedPage(records, Option(response.millisBehindLatest()).map(_.longValue()).getOrElse(0L), ended)
    }
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
        val detail = s"the query's position (sequence number $seq) is older than the oldest record still in the " +
          oldest.fold("shard (none is left)")(o => s"shard ($o)")
        if (failOnDataLoss) throw KinesisErrors.dataLoss(s"shard $shardId of stream '$stream'", detail)
        logWarning(s"Data loss on shard $shardId of stream '$stream': $detail. Going on from the oldest record " +
          "(failOnDataLoss=false).")
        dataLossCount += 1
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

  /** GetRecords calls spent looking for the oldest record of a shard (empty pages may precede it). */
  private val OldestProbeCalls = 10
}
