package io.sparkkinesis.source

import io.sparkkinesis.fetching.{FetchSettings, ShardReading}
import io.sparkkinesis.offsets.{KinesisSourceOffset, ShardKey}

/**
 * What a streaming read's planning needs of its stream beyond Spark's protocol: the query's source id, how its tasks
 * read, the shards it may read from a start, and where their reports go. [[KinesisMicroBatchStream]] is one; the
 * real-time plan (`RealTimePlan`, Spark 4.1+) plans its batches through it, so the real-time stream reaches into no
 * other part of the micro-batch stream.
 */
private[source] trait StreamView {

  /** The query's id among the application's (its shard sessions on the executors are kept under it). */
  def sourceId: String

  /** How the query's tasks read (the read mode with its fan-out consumers). */
  def readSettings: FetchSettings

  /**
   * `start` brought in step with the streams and the shard listing (listed at once when `listNow`), the shards of it
   * that may be read now, and its ended shards that are parents of shards not ended.
   */
  def shardsToRead(start: KinesisSourceOffset, listNow: Boolean): (KinesisSourceOffset, Seq[ShardKey], Set[ShardKey])

  /** Whether the last shard listing shows the shard closed. */
  def isClosed(key: ShardKey): Boolean

  /** What a batch's tasks reported of their shards, for the source's metrics. */
  def recordBatchReports(readings: Seq[ShardReading]): Unit
}
