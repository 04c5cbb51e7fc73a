package io.sparkkinesis.writer

import scala.util.control.NonFatal

import org.apache.spark.internal.Logging
import software.amazon.awssdk.services.kinesis.KinesisAsyncClient
import software.amazon.awssdk.services.kinesis.model.DescribeStreamSummaryRequest

import io.sparkkinesis.aws.{RetryPolicy, StreamRef}
import io.sparkkinesis.errors.{KinesisErrors, KinesisException}

/**
 * The largest record a stream accepts, partition key included: `MaxRecordSizeInKiB` of DescribeStreamSummary, which
 * UpdateMaxRecordSize sets per stream from 1,024 to 10,240 KiB. The sink keeps to it unless `maxRecordSize` is set,
 * and asks only when a record (or `aggregationMaxSize`) is over 1 MiB. Asked at most once per `ExpiryMillis` per
 * client (that is, per connection) and stream on each executor, since DescribeStreamSummary allows 20 calls a second
 * per account. A stream that does not say (an older service API, the
 * local test servers) takes 1 MiB, the service's default; so does one the writer's credentials may not describe, or
 * an endpoint that does not know the call, with a warning. Other failures (a missing stream, an endpoint that cannot
 * be reached) fail the write as they would at its first PutRecords call.
 */
private[writer] object StreamRecordLimit extends Logging {

  val ExpiryMillis = 300000L
  private val cache = new StreamCache[Long](ExpiryMillis)

  def of(
      client: KinesisAsyncClient,
      stream: StreamRef,
      policy: RetryPolicy = RetryPolicy.Default,
      nowMillis: Long = System.currentTimeMillis()): Long =
    cache.get(client, stream, nowMillis)(load(client, stream, policy))

  def load(client: KinesisAsyncClient, stream: StreamRef, policy: RetryPolicy = RetryPolicy.Default): Long =
    try {
      val request = DescribeStreamSummaryRequest.builder()
      val summary = policy.call("DescribeStreamSummary", stream.toString) {
        client.describeStreamSummary(stream.arn.fold(request.streamName(stream.name))(request.streamARN).build()).join()
      }.streamDescriptionSummary()
      Option(summary.maxRecordSizeInKiB()).map(_.toLong * 1024).getOrElse(SinkLimits.DefaultRecordBytes)
    } catch {
      case e: KinesisException if !Unanswered.contains(e.condition) => throw e
      case NonFatal(e) =>
        logWarning(s"Could not learn the largest record stream '$stream' accepts (DescribeStreamSummary: " +
          s"${KinesisErrors.safeMessage(e)}); writing records of up to 1 MiB. Set 'maxRecordSize' for a stream " +
          "whose maximum record size was raised.")
        SinkLimits.DefaultRecordBytes
    }

  /** Conditions of a DescribeStreamSummary that got no answer the write needs: it goes on with 1 MiB. */
  private val Unanswered = Set("KINESIS_ACCESS_DENIED", "KINESIS_SERVICE_ERROR")
}
