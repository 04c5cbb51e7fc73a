package io.sparkkinesis.fetching

/**
 * Reads one shard, in order, from where it was opened, on an executor. The seam where a way of reading plugs in:
 * [[PollingShardFetcher]] (GetRecords) and [[FanOutShardFetcher]] (enhanced fan-out, SubscribeToShard);
 * [[ShardFetchers]] chooses and builds the one to use.
 */
private[sparkkinesis] trait ShardFetcher {

  /** The next page of records after the last one returned. Must not be called once [[shardEnded]]. */
  final def fetch(): FetchedPage = fetch(patient = true)

  /**
   * The same; when not `patient`, a call the service throttles (or another retryable failure) is not retried
   * after a backoff but fails at once, the fetcher unchanged: for background reading, which must not hold a thread
   * while it backs off.
   */
  def fetch(patient: Boolean): FetchedPage

  /** Whether the shard is closed and every record in it has been returned. */
  def shardEnded: Boolean

  /** Calls made so far, including retries (for metrics and tests). */
  def calls: Long

  /** Calls the service throttled. */
  def throttled: Long

  /** Times this fetcher found its position trimmed away and went on from the trim horizon (failOnDataLoss=false). */
  def dataLoss: Long

  /** Subscriptions renewed (enhanced fan-out): ended by the service, silent, or taken over, and opened again. */
  def renewals: Long = 0L

  /** Subscriptions that failed (enhanced fan-out) and were opened again after a pause. */
  def subscribeFailures: Long = 0L

  /**
   * Whether records are pushed to the fetcher (enhanced fan-out) rather than asked for: an empty answer then cost no
   * call to the service, and the shard can be looked at again after `minFetchPeriod` instead of `idleFetchPeriod`.
   */
  def pushed: Boolean = false

  /** Lets go of what the fetcher holds open (a subscription); the fetcher is not used afterwards. */
  def close(): Unit = ()
}
