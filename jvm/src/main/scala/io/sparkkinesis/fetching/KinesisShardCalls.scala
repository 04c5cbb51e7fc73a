package io.sparkkinesis.fetching

import io.sparkkinesis.compat.CollectionConverters._

import software.amazon.awssdk.services.kinesis.KinesisClient
import software.amazon.awssdk.services.kinesis.model._

import io.sparkkinesis.aws.StreamRef
import io.sparkkinesis.offsets.StartPosition

/**
 * A Kinesis shard, for [[PollingShardFetcher]]. It asks for its client on every call (`client`: the JVM's cache, which
 * may replace a client it closed) and names the stream by its ARN when one was given.
 *
 * Kinesis refuses an iterator at a sequence number that retention trimmed with InvalidArgumentException, which it
 * also answers for other reasons: such a refusal is trimmed data only when the oldest record still in the shard comes
 * after the position (the fetcher's check).
 */
private[sparkkinesis] final class KinesisShardCalls(
    client: () => KinesisClient,
    val stream: StreamRef,
    val shardId: String)
  extends ShardCalls {

  override def streamKind: String = "stream"
  override def retention: String = "the stream's retention period"

  override def shardIterator(position: StartPosition): String = {
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
    client().getShardIterator(b.build()).shardIterator()
  }

  override def getRecords(iterator: String, limit: Int): ShardCalls.Page = {
    val r = client().getRecords(GetRecordsRequest.builder().shardIterator(iterator).limit(limit).build())
    ShardCalls.Page(r.records().asScala.toSeq, Option(r.nextShardIterator()),
      Option(r.millisBehindLatest()).map(_.longValue()).getOrElse(0L))
  }

  override def streamLookup: String = "ListShards"

  override def lookUpStream(): Unit = {
    val b = ListShardsRequest.builder().maxResults(1)
    stream.arn.fold(b.streamName(stream.name))(b.streamARN)
    client().listShards(b.build())
  }

  override def trimmed(refusal: Throwable, olderThanOldest: => Option[String]): Option[String] = refusal match {
    case _: InvalidArgumentException => olderThanOldest
    case _ => None
  }
}
