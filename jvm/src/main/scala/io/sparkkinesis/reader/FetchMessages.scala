package io.sparkkinesis.reader

import io.sparkkinesis.aws.{AwsConnection, StreamRef}
import io.sparkkinesis.fetching.{FetchSettings, ShardReading}
import io.sparkkinesis.offsets.{RecordPosition, ShardKey, ShardPosition}

/**
 * What the driver asks of one shard in a prefetch round: data after `from`, and a cut within the budget. `closed`:
 * the driver's last listing shows the shard closed, so it is read to its end by GetRecords (see `ShardFetchers`).
 */
private[sparkkinesis] final case class ShardFetchRequest(
    key: ShardKey,
    stream: StreamRef,
    from: ShardPosition,
    maxRecords: Long,
    maxBytes: Long,
    closed: Boolean = false)

/**
 * One prefetch task: a group of shards, read on the executor that holds their buffers (`location`). `retired`:
 * queries of the application that stopped, whose buffers the executor drops first (see [[RetiredSources]]).
 * `opening`: the query's first round, which reads one short page per shard ([[Prefetcher]]).
 */
private[sparkkinesis] final case class FetchTaskSpec(
    sourceId: String,
    shards: Seq[ShardFetchRequest],
    connection: AwsConnection,
    fetch: FetchSettings,
    cutoffMillis: Option[Long],
    location: Option[String],
    retired: Seq[String] = Nil,
    opening: Boolean = false)

/**
 * What an executor answers for one shard after a prefetch round: where the next batch may end (`end`, within the
 * budget) and how much that covers, and the shard's read state. `shardEnded`: the shard is closed and its last record
 * has been read; `end` becomes `Ended` in the round after every record is planned. `first`: the first record the cut
 * covers (pinned in the offset when the shard's range starts at trim horizon). `reading`: what the buffer showed of
 * the shard, among it what it holds beyond the cut, and where it is.
 */
private[sparkkinesis] final case class ShardCut(
    end: ShardPosition,
    records: Long,
    bytes: Long,
    caughtUp: Boolean,
    shardEnded: Boolean,
    pastCutoff: Boolean,
    nextDueMillis: Long,
    reading: ShardReading,
    first: Option[RecordPosition] = None) {
  def key: ShardKey = reading.key
  def location: String = reading.location

  /** Records and bytes buffered beyond the cut. */
  def bufferedRecords: Long = reading.bufferedRecords
  def bufferedBytes: Long = reading.bufferedBytes
}
