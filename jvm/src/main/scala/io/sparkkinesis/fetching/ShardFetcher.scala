package io.sparkkinesis.fetching

/**
 * Reads one shard, in order, from where it was opened, on an executor. The seam where a way of reading plugs in:
 * [[PollingShardFetcher]] (GetRecords) today; [[ShardFetchers]] chooses and builds the one to use.
 */
private[sparkkinesis] trait ShardFetcher {

  /** The next page of records after the last one returned. Must not be called once [[shardEnded]]. */
  def fetch(): FetchedPage

  /** Whether the shard is closed and every record in it has been returned. */
  def shardEnded: Boolean

  /** Calls made so far, including retries (for metrics and tests). */
  def calls: Long

  /** Calls the service throttled. */
  def throttled: Long

  /** Times this fetcher found its position trimmed away and went on from the trim horizon (failOnDataLoss=false). */
  def dataLoss: Long
}
