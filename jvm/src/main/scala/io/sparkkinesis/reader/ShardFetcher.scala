package io.sparkkinesis.reader

import scala.jdk.CollectionConverters._

import org.apache.spark.internal.Logging

import io.sparkkinesis.aws.StreamRef
import io.sparkkinesis.errors.KinesisErrors
import io.sparkkinesis.source.StartPosition
import software.amazon.awssdk.services.kinesis.KinesisClient
import software.amazon.awssdk.services.kinesis.model._

/** One GetRecords answer: the records, how far behind the tip the shard is, and whether the shard has ended. */
final case class Fetched(records: Seq[Record], millisBehindLatest: Long, shardEnded: Boolean)

/**
 * Reads one shard with GetRecords, executor side. It keeps the shard iterator between calls, spaces calls at
 * least `minPeriodMillis` apart whatever they returned (the service allows 5 reads per second per shard),
 * backs off with jitter on throttling and transient errors, and renews an expired iterator from the last
 * sequence number it returned, so no record is skipped or repeated.
 *
 * A sequence number the service refuses (InvalidArgumentException) is checked against the shard's trim horizon:
 * when the oldest record still in the shard comes after it, the records in between were trimmed by retention.
 * That is data loss: with `failOnDataLoss` the read fails with [KINESIS_DATA_LOSS]; without, it is logged,
 * counted in `dataLoss` and reading goes on from the trim horizon.
 */
final class ShardFetcher(
    client: KinesisClient,
    stream: StreamRef,
    shardId: String,
    start: StartPosition,
    maxRecordsPerCall: Int,
    minPeriodMillis: Long,
    failOnDataLoss: Boolean = true,
    clock: () => Long = () => System.currentTimeMillis(),
    sleep: Long => Unit = Thread.sleep) extends Logging {

  private var iterator: Option[String] = None
  private var lastSequence: Option[String] = None
  private var lastCallAt: Long = Long.MinValue
  private var ended = false
  private val backoff = Backoff(baseMillis = math.max(minPeriodMillis, 100))

  /** Calls made so far, including retries (for metrics and tests). */
  var calls: Long = 0
  var throttled: Long = 0
  /** Times this fetcher found its position trimmed away and went on from the trim horizon. */
  var dataLoss: Long = 0

  def shardEnded: Boolean = ended

  def fetch(): Fetched = {
    require(!ended, s"shard $shardId of $stream has ended")
    var attempt = 0
    var codes = List.empty[String]
    while (true) {
      pace()
      try {
        val it = iterator.getOrElse(newIterator())
        calls += 1
        val response = client.getRecords(GetRecordsRequest.builder().shardIterator(it).limit(maxRecordsPerCall).build())
        val records = response.records().asScala.toSeq
        records.lastOption.foreach(r => lastSequence = Some(r.sequenceNumber()))
        iterator = Option(response.nextShardIterator())
        ended = iterator.isEmpty
        return Fetched(records, Option(response.millisBehindLatest()).map(_.longValue()).getOrElse(0L), ended)
      } catch {
        case e: Throwable if Failure.of(e) == Failure.ExpiredIterator =>
          iterator = None // renewed from lastSequence on the next turn; not counted against the budget
        case e: Throwable if Failure.of(e) == Failure.Throttled || Failure.of(e) == Failure.Transient =>
          if (Failure.of(e) == Failure.Throttled) throttled += 1
          codes ::= Failure.code(e)
          attempt += 1
          if (attempt >= Retrying.DefaultAttempts)
            throw KinesisErrors.retriesExhausted(s"GetRecords on shard $shardId of stream '$stream'", attempt, codes, e)
          sleep(backoff.delayMillis(attempt))
        case e: Throwable if Failure.of(e) == Failure.NotFound => throw KinesisErrors.streamNotFound(stream.toString, e)
        case e: Throwable if Failure.of(e) == Failure.AccessDenied =>
          throw KinesisErrors.accessDenied(stream.toString, "GetRecords", e)
        case e: Throwable if Failure.of(e) == Failure.NoCredentials => throw KinesisErrors.noCredentials(e)
        case e: software.amazon.awssdk.core.exception.SdkException if Failure.of(e) == Failure.Fatal =>
          throw KinesisErrors.serviceError(s"GetRecords on shard $shardId", stream.toString, e)
      }
    }
    throw new IllegalStateException("unreachable")
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
      case e: InvalidArgumentException =>
        val oldest = oldestSequence()
        if (!oldest.forall(o => BigInt(o) > BigInt(seq))) throw e
        val detail = s"the query's position (sequence number $seq) is older than the oldest record still in the " +
          oldest.fold("shard (none is left)")(o => s"shard ($o)")
        if (failOnDataLoss) throw KinesisErrors.dataLoss(s"shard $shardId of stream '$stream'", detail)
        logWarning(s"Data loss on shard $shardId of stream '$stream': $detail. Going on from the oldest record " +
          "(failOnDataLoss=false).")
        dataLoss += 1
        lastSequence = None
        shardIterator(StartPosition.TrimHorizon)
    }

  /** The sequence number of the oldest record in the shard (None when it holds none), with a few calls at most. */
  private def oldestSequence(): Option[String] = {
    var it: Option[String] = Some(shardIterator(StartPosition.TrimHorizon))
    var calls = 0
    while (it.isDefined && calls < OldestProbeCalls) {
      calls += 1
      val response = Retrying.call("GetRecords", stream.toString)(
        client.getRecords(GetRecordsRequest.builder().shardIterator(it.get).limit(1).build()))
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
      case StartPosition.AtSequence(s) => b.shardIteratorType(ShardIteratorType.AT_SEQUENCE_NUMBER).startingSequenceNumber(s)
      case StartPosition.AfterSequence(s) =>
        b.shardIteratorType(ShardIteratorType.AFTER_SEQUENCE_NUMBER).startingSequenceNumber(s)
    }
    Retrying.call("GetShardIterator", stream.toString)(client.getShardIterator(b.build())).shardIterator()
  }

  /** GetRecords calls spent looking for the oldest record of a shard (empty pages may precede it). */
  private val OldestProbeCalls = 10
}
