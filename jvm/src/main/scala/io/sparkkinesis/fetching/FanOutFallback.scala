package io.sparkkinesis.fetching

import io.sparkkinesis.offsets.StartPosition

/**
 * GetRecords in place of a fan-out subscription that cannot be had (from a failed attempt until the next event), so
 * that a shard is never stuck waiting for one: the fetcher `open` builds, from the last record handed out, kept
 * until an event comes and let go then. What its calls cost counts in the fan-out fetcher's totals. Not
 * thread-safe, except [[read]], which the fan-out fetcher calls outside its lock.
 */
private[fetching] final class FanOutFallback(open: StartPosition => ShardFetcher) {
  private var polling: Option[ShardFetcher] = None
  private var spent = FetchCounts.Zero

  /** The calls, throttles and losses of every GetRecords fetcher used so far. */
  def counts: FetchCounts = spent

  /** The GetRecords fetcher, opened `from` the first time it is asked for; whether it was opened now. */
  def fetcher(from: => StartPosition): (ShardFetcher, Boolean) = polling match {
    case Some(p) => (p, false)
    case None =>
      val p = open(from)
      polling = Some(p)
      (p, true)
  }

  /** When the fetcher in use may next return records (see [[ShardFetcher.readyAt]]); none in use: now. */
  def readyAt: Long = polling.fold(Long.MinValue)(_.readyAt)

  /** A page of `p`, and what the call cost, to [[count]] under the caller's lock. */
  def read(p: ShardFetcher, patient: Boolean): (FetchedPage, FetchCounts) = {
    val before = FetchCounts.of(p)
    val page = p.fetch(patient)
    (page, FetchCounts.of(p) - before)
  }

  def count(cost: FetchCounts): Unit = spent += cost

  /** An event came: the subscription serves again, and the next failure opens a new fetcher from where it stands. */
  def release(): Unit = polling = None

  def close(): Unit = {
    polling.foreach(_.close())
    polling = None
  }
}
