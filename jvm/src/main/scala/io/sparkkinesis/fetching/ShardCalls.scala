package io.sparkkinesis.fetching

import software.amazon.awssdk.services.kinesis.model.Record

import io.sparkkinesis.aws.StreamRef
import io.sparkkinesis.offsets.StartPosition

/**
 * What [[PollingShardFetcher]] asks of the service one shard lives in: the part of reading by GetRecords that differs
 * between Kinesis ([[KinesisShardCalls]]) and DynamoDB Streams ([[StreamsShardCalls]]). That is the client and its
 * requests, the records (DynamoDB's reach the engine as Kinesis records), how far behind the tip a page is, and how
 * the service says that a position was trimmed away. Each call is made once and throws what the service answered:
 * the fetcher paces, retries and counts the calls, and handles what they throw.
 */
private[sparkkinesis] trait ShardCalls {
  def stream: StreamRef
  def shardId: String

  /** How messages name the stream ("stream", "DynamoDB stream"), and what deletes its records ("the stream's ..."). */
  def streamKind: String
  def retention: String

  /** A shard iterator at `position`. */
  def shardIterator(position: StartPosition): String

  /**
   * The time (epoch millis) before which the records read from `start` are skipped: for a service without an
   * iterator at a time, whose [[shardIterator]] then starts at the trim horizon. None when the iterator starts there.
   */
  def skipBefore(start: StartPosition): Option[Long] = None

  /** One GetRecords call of at most `limit` records from `iterator`. */
  def getRecords(iterator: String, limit: Int): ShardCalls.Page

  /** A call that fails with the service's not-found error when the stream does not exist, and its name for errors. */
  def lookUpStream(): Unit
  def streamLookup: String

  /**
   * When `refusal`, the error of [[shardIterator]] or [[getRecords]], says that retention trimmed away the position
   * read from: what the position is older than, for the data-loss message. `olderThanOldest` is the fetcher's own
   * check against the oldest record still in the shard (a few calls), for a service whose refusal does not say why.
   */
  def trimmed(refusal: Throwable, olderThanOldest: => Option[String]): Option[String]
}

private[sparkkinesis] object ShardCalls {

  /** One GetRecords answer: the records, the next iterator (None once the shard has ended), how far behind the tip. */
  final case class Page(records: Seq[Record], next: Option[String], millisBehindLatest: Long)
}
