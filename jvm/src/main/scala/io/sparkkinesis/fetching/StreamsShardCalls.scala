package io.sparkkinesis.fetching

import io.sparkkinesis.compat.CollectionConverters._

import software.amazon.awssdk.services.dynamodb.model._
import software.amazon.awssdk.services.dynamodb.streams.DynamoDbStreamsClient

import io.sparkkinesis.aws.StreamRef
import io.sparkkinesis.errors.KinesisErrors
import io.sparkkinesis.offsets.StartPosition

/**
 * A shard of a DynamoDB stream (`format("dynamodb-streams")`), for [[PollingShardFetcher]], through the SDK's
 * DynamoDB Streams client (asked for on every call, as Kinesis's). Its records reach the engine as Kinesis records
 * ([[StreamRecordCodec]]).
 *
 * DynamoDB Streams keeps records 24 hours and says when a position is older: TrimmedDataAccessException, from
 * GetShardIterator or from GetRecords on an iterator held meanwhile.
 *
 * It has no AT_TIMESTAMP iterator: a start at a time (`latest`, which the engine pins as the time the query began, or
 * `at_timestamp`) reads the shard from its oldest record and skips what was created before that time's second (the
 * service rounds creation times down to the second, so a record of the same second is kept, never lost). Such a start
 * costs one pass over up to 24 hours of the shard.
 *
 * It reports no MillisBehindLatest: a page with fewer records than asked for is taken as the tip (0), a full one as
 * behind by the age of its last record (at least 1 ms), which is what buffers and metrics need.
 */
private[sparkkinesis] final class StreamsShardCalls(
    client: () => DynamoDbStreamsClient,
    val stream: StreamRef,
    val shardId: String,
    clock: () => Long = () => System.currentTimeMillis()) extends ShardCalls {
  // The most records one DynamoDB Streams GetRecords call returns.
  private val MaxRecordsPerCall = 1000

  override def streamKind: String = "DynamoDB stream"
  override def retention: String = "the stream's 24-hour retention"

  override def shardIterator(position: StartPosition): String = {
    val b = GetShardIteratorRequest.builder().streamArn(stream.toString).shardId(shardId)
    position match {
      case StartPosition.TrimHorizon | StartPosition.AtTimestamp(_) =>
        b.shardIteratorType(ShardIteratorType.TRIM_HORIZON)
      case StartPosition.Latest => b.shardIteratorType(ShardIteratorType.LATEST)
      case StartPosition.AtSequence(s) => b.shardIteratorType(ShardIteratorType.AT_SEQUENCE_NUMBER).sequenceNumber(s)
      case StartPosition.AfterSequence(s) =>
        b.shardIteratorType(ShardIteratorType.AFTER_SEQUENCE_NUMBER).sequenceNumber(s)
    }
    client().getShardIterator(b.build()).shardIterator()
  }

  override def skipBefore(start: StartPosition): Option[Long] = start match {
    case StartPosition.AtTimestamp(ms) => Some(ms - Math.floorMod(ms, 1000L))
    case _ => None
  }

  override def getRecords(iterator: String, limit: Int): ShardCalls.Page = {
    val asked = math.min(limit, MaxRecordsPerCall)
    val response = client().getRecords(GetRecordsRequest.builder().shardIterator(iterator).limit(asked).build())
    val records = response.records().asScala.toSeq
    val behind =
      if (records.size < asked) 0L
      else
        math.max(1L,
          records.lastOption.flatMap(r => Option(r.dynamodb().approximateCreationDateTime()))
            .fold(1L)(t => clock() - t.toEpochMilli))
    ShardCalls.Page(records.map(StreamRecordCodec.toKinesis), Option(response.nextShardIterator()), behind)
  }

  override def streamLookup: String = "DescribeStream"

  override def lookUpStream(): Unit =
    client().describeStream(DescribeStreamRequest.builder().streamArn(stream.toString).limit(1).build())

  override def trimmed(refusal: Throwable, olderThanOldest: => Option[String]): Option[String] = refusal match {
    case t: TrimmedDataAccessException => Some(s"$retention (${KinesisErrors.safeMessage(t).take(200)})")
    case _ => None
  }
}
