package io.sparkkinesis.fetching

import io.sparkkinesis.compat.CollectionConverters._

import org.apache.spark.internal.Logging
import software.amazon.awssdk.services.dynamodb.model.{
  DescribeStreamRequest,
  GetRecordsRequest,
  GetShardIteratorRequest,
  ShardIteratorType,
  TrimmedDataAccessException
}
import software.amazon.awssdk.services.dynamodb.streams.DynamoDbStreamsClient

import io.sparkkinesis.aws.{Contact, Failure, RetryPolicy, StreamRef}
import io.sparkkinesis.errors.{Condition, KinesisErrors, KinesisException}
import io.sparkkinesis.offsets.StartPosition

/**
 * Reads one shard of a DynamoDB stream with GetRecords (`format("dynamodb-streams")`), as [[PollingShardFetcher]]
 * reads a Kinesis shard: the iterator kept between calls, calls at least `minPeriodMillis` apart, throttling and
 * transient errors retried under the connector's [[RetryPolicy]], an expired iterator renewed after the last
 * sequence number returned. Its records reach the engine as Kinesis records ([[StreamRecordCodec]]).
 *
 * DynamoDB Streams keeps records 24 hours. A position older than that is refused with TrimmedDataAccessException:
 * with `failOnDataLoss` the read fails with [KINESIS_DATA_LOSS] (whose message names the option); without, the loss
 * is logged and counted and reading goes on from the oldest record. A shard the service no longer knows while its
 * stream answers is a closed shard past retention: the same loss, and the shard taken as ended.
 *
 * DynamoDB Streams has no AT_TIMESTAMP iterator: a start at a time (`latest`, which the engine pins as the time the
 * query began, or `at_timestamp`) reads the shard from its oldest record and skips what was created before that
 * time's second, so such a start costs one pass over up to 24 hours of the shard.
 *
 * The service reports no MillisBehindLatest: a page with fewer records than asked for is taken as the tip (0), a
 * full one as behind by the age of its last record (at least 1 ms), which is what buffers and metrics need.
 */
private[sparkkinesis] final class StreamsShardFetcher(
    client: () => DynamoDbStreamsClient,
    stream: StreamRef,
    shardId: String,
    start: StartPosition,
    maxRecordsPerCall: Int,
    minPeriodMillis: Long,
    failOnDataLoss: Boolean = true,
    contact: Option[Contact] = None,
    clock: () => Long = () => System.currentTimeMillis(),
    sleep: Long => Unit = Thread.sleep) extends ShardFetcher with Logging {
  import StreamsShardFetcher._

  private var iterator: Option[String] = None
  private var from: StartPosition = start
  private var lastSequence: Option[String] = None
  private var lastCallAt: Long = Long.MinValue
  private var ended = false
  private val policy = PollingShardFetcher.retryPolicy(minPeriodMillis, contact)
  private val patientSingleCalls = RetryPolicy.Default.copy(contact = contact)
  private var singleCalls = patientSingleCalls
  private var callCount = 0L
  private var throttledCount = 0L
  private var dataLossCount = 0L
  private var failure: Option[KinesisException] = None
  // A start at a time (`latest` as the engine pins it, or `at_timestamp`): DynamoDB Streams has no such iterator, so
  // the shard is read from its oldest record and records created before that time's second are skipped (the
  // service rounds creation times down to the second, so a record of the same second is kept, never lost).
  private var notBefore: Option[Long] = start match {
    case StartPosition.AtTimestamp(ms) => Some(ms - Math.floorMod(ms, 1000L))
    case _ => None
  }

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
    val asked = math.max(1, math.min(math.min(limit, maxRecordsPerCall), MaxRecordsPerCall))
    try {
      (if (patient) policy else policy.copy(maxRetries = 0)).call(s"GetRecords on shard $shardId", stream.toString,
        handled = { case Failure.ExpiredIterator => iterator = None },
        onRetry = f => if (f == Failure.Throttled) throttledCount += 1,
        sleep = sleep) {
        pace()
        try {
          val it = iterator.getOrElse(newIterator())
          callCount += 1
          val response = client().getRecords(GetRecordsRequest.builder().shardIterator(it).limit(asked).build())
          val all = response.records().asScala.toSeq
          all.lastOption.foreach(r => lastSequence = Some(r.dynamodb().sequenceNumber()))
          iterator = Option(response.nextShardIterator())
          ended = iterator.isEmpty
          val records = notBefore.fold(all) { second =>
            val kept = all.dropWhile(r =>
              Option(r.dynamodb().approximateCreationDateTime()).exists(_.toEpochMilli <
                  second))
            if (kept.nonEmpty || ended) notBefore = None
            kept
          }
          val behind =
            if (all.size < asked) 0L
            else
              math.max(1L,
                all.lastOption.flatMap(r => Option(r.dynamodb().approximateCreationDateTime()))
                  .fold(1L)(t => clock() - t.toEpochMilli))
          FetchedPage(records.map(StreamRecordCodec.toKinesis), behind, ended)
        } catch {
          // Thrown by GetRecords, or by GetShardIterator under its policy (which wraps it in a service error).
          case e: Throwable if trimmed(e).isDefined =>
            lost(s"the query's position ($position) is older than the stream's 24-hour retention " +
              s"(${KinesisErrors.safeMessage(trimmed(e).get).take(200)})")
            lastSequence = None
            from = StartPosition.TrimHorizon
            iterator = None
            FetchedPage(Seq.empty, 1L, shardEnded = false)
        }
      }
    } catch {
      case e: KinesisException if e.is(Condition.StreamNotFound) && streamExists() => shardGone(e)
      case e: KinesisException
          if !patient && e.is(Condition.RetriesExhausted) &&
            Option(e.getCause).exists(c => Failure.of(c) == Failure.Throttled) =>
        throttledCount += 1
        throw e
    }
  }

  private def trimmed(e: Throwable): Option[TrimmedDataAccessException] = e match {
    case t: TrimmedDataAccessException => Some(t)
    case k: KinesisException => Option(k.getCause).collect { case t: TrimmedDataAccessException => t }
    case _ => None
  }

  private def position: String =
    lastSequence.map(s => s"after sequence number $s").getOrElse(from match {
      case StartPosition.AtSequence(s) => s"at sequence number $s"
      case StartPosition.AfterSequence(s) => s"after sequence number $s"
      case other => s"not started (to begin at $other)"
    })

  /** Fails the read with [KINESIS_DATA_LOSS], or (failOnDataLoss=false) logs and counts the loss. */
  private def lost(detail: String, next: String = "Going on from the oldest record"): Unit = {
    if (failOnDataLoss) {
      failure = Some(KinesisErrors.dataLoss(s"shard $shardId of DynamoDB stream '$stream'", detail))
      throw failure.get
    }
    logWarning(s"Data loss on shard $shardId of DynamoDB stream '$stream': $detail. $next (failOnDataLoss=false).")
    dataLossCount += 1
  }

  private def streamExists(): Boolean =
    try {
      singleCalls.call("DescribeStream", stream.toString)(
        client().describeStream(DescribeStreamRequest.builder().streamArn(stream.toString).limit(1).build()))
      true
    } catch { case e: KinesisException if e.is(Condition.StreamNotFound) => false }

  private def shardGone(e: KinesisException): FetchedPage = {
    lost(
      s"the shard no longer exists, while the stream does (a closed shard is deleted once its records pass the " +
        s"24-hour retention); the query's position is $position. The service said: " +
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
    val b = GetShardIteratorRequest.builder().streamArn(stream.toString).shardId(shardId)
    lastSequence.map(StartPosition.AfterSequence).getOrElse(from) match {
      case StartPosition.TrimHorizon => b.shardIteratorType(ShardIteratorType.TRIM_HORIZON)
      case StartPosition.Latest => b.shardIteratorType(ShardIteratorType.LATEST)
      case StartPosition.AtTimestamp(_) => b.shardIteratorType(ShardIteratorType.TRIM_HORIZON)
      case StartPosition.AtSequence(s) =>
        b.shardIteratorType(ShardIteratorType.AT_SEQUENCE_NUMBER).sequenceNumber(s)
      case StartPosition.AfterSequence(s) =>
        b.shardIteratorType(ShardIteratorType.AFTER_SEQUENCE_NUMBER).sequenceNumber(s)
      case other =>
        throw new IllegalArgumentException(s"DynamoDB Streams cannot start a read at $other")
    }
    singleCalls.call("GetShardIterator", stream.toString)(client().getShardIterator(b.build())).shardIterator()
  }
}

private[sparkkinesis] object StreamsShardFetcher {

  /** The most records one DynamoDB Streams GetRecords call returns. */
  val MaxRecordsPerCall = 1000
}
