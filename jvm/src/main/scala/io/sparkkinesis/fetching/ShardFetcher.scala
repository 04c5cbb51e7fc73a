package io.sparkkinesis.fetching

/**
 * Reads one shard, in order, from where it was opened, on an executor. The seam where a way of reading plugs in:
 * [[PollingShardFetcher]] (GetRecords, of Kinesis or DynamoDB Streams) and [[FanOutShardFetcher]] (enhanced fan-out,
 * SubscribeToShard); [[ShardFetchers]] chooses and builds the one to use.
 */
private[sparkkinesis] trait ShardFetcher {

  /** The next page of records after the last one returned. Must not be called once [[shardEnded]]. */
  final def fetch(): FetchedPage = fetch(patient = true)

  /**
   * The same; when not `patient`, a call the service throttles (or another retryable failure) is not retried
   * after a backoff but fails at once (with [KINESIS_RETRIES_EXHAUSTED] after one attempt, the failure as its
   * cause), the fetcher unchanged: for reading that must not hold a thread while it backs off (read-ahead; a
   * real-time task, which backs off that shard under the same [[io.sparkkinesis.aws.RetryPolicy]] and reads its
   * other shards meanwhile).
   */
  def fetch(patient: Boolean): FetchedPage

  /**
   * The same, asking for at most `limit` records where the way of reading lets the reader choose (GetRecords); a
   * pushed fetcher returns what it holds. For a query's opening round (see `reader.Prefetcher`).
   */
  def fetch(patient: Boolean, limit: Int): FetchedPage = fetch(patient)

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

  /**
   * The earliest time (epoch millis) a [[fetch]] may return records without waiting in the call: for a fetcher
   * that asks (GetRecords) the time its next call is due, `minPeriodMillis` after the last; for a pushed one now
   * while it holds records, is reading by GetRecords meanwhile, or has news (its end, a failure), else never
   * (`Long.MaxValue`) until [[whenReady]]'s callback says it may have changed. A real-time task waits for the
   * earliest of its shards' times instead of looking again and again.
   */
  def readyAt: Long = Long.MinValue

  /**
   * What a pushed fetcher runs whenever [[readyAt]] may have moved earlier (an event queued, a subscription failed
   * or ended). It runs on the SDK's threads, so it must only signal; a fetcher that asks never runs it.
   */
  def whenReady(wake: () => Unit): Unit = ()

  /** Whether the fetcher failed for good: every [[fetch]] throws the same error, trying again cannot help. */
  def broken: Boolean = false

  /**
   * Which user records of the KPL aggregates this fetcher returns a reader keeps, and how many it dropped
   * ([[SubRecordFilter]]): set by [[ShardFetchers.open]] from the query's settings; a fetcher built otherwise keeps
   * every one.
   */
  @volatile private[sparkkinesis] var subRecords: SubRecordFilter = SubRecordFilter.KeepAll

  /** Lets go of what the fetcher holds open (a subscription); the fetcher is not used afterwards. */
  def close(): Unit = ()
}
