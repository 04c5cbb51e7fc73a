package io.sparkkinesis.fetching

/**
 * What reading a shard cost and met, as running totals: calls (GetRecords, SubscribeToShard), throttled calls,
 * trimmed-away positions skipped (failOnDataLoss=false), fan-out subscriptions renewed and failed, user records of KPL
 * aggregates dropped as outside the shard's hash key range ([[SubRecordFilter]]). Added up over the
 * fetchers a shard had and over shards, for the source's metrics.
 */
private[sparkkinesis] final case class FetchCounts(
    calls: Long = 0L,
    throttled: Long = 0L,
    dataLoss: Long = 0L,
    renewed: Long = 0L,
    failed: Long = 0L,
    droppedSubRecords: Long = 0L) {
  def +(o: FetchCounts): FetchCounts =
    FetchCounts(calls + o.calls, throttled + o.throttled, dataLoss + o.dataLoss, renewed + o.renewed, failed + o.failed,
      droppedSubRecords + o.droppedSubRecords)
  def -(o: FetchCounts): FetchCounts =
    FetchCounts(calls - o.calls, throttled - o.throttled, dataLoss - o.dataLoss, renewed - o.renewed, failed - o.failed,
      droppedSubRecords - o.droppedSubRecords)
}

private[sparkkinesis] object FetchCounts {
  val Zero: FetchCounts = FetchCounts()

  /** A fetcher's counts so far. */
  def of(f: ShardFetcher): FetchCounts =
    FetchCounts(f.calls, f.throttled, f.dataLoss, f.renewals, f.subscribeFailures, f.subRecords.dropped)
}
