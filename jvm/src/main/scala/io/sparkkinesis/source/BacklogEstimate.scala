package io.sparkkinesis.source

import io.sparkkinesis.fetching.HeldRecords
import io.sparkkinesis.offsets.ShardKey

/**
 * Estimates how many records and bytes of each shard the query has not fetched yet (the part of `pendingRecords`,
 * `pendingBytes` beyond the buffered records), from what the driver already has after each prefetch round: the
 * shard's MillisBehindLatest, when the call that said it returned, and how much its fetcher has read in all
 * (records planned into batches plus those buffered beyond them).
 *
 * The fetcher's position in the stream's time is the time of that call minus MillisBehindLatest. Between two
 * readings it moved on by some span, in which it read some records: their ratio is the rate records arrived at the
 * shard around the position read (averaged over readings, the newest span weighing half). Now, the stream's tip is
 * `now - position` of stream time ahead (MillisBehindLatest then, plus the time since: a fetcher that stopped
 * reading because its buffer holds enough falls behind as records keep arriving), holding about that rate times that
 * span. Until the fetcher has moved on once, the rate is that of the records its buffer holds: how many, over the
 * stream time from the oldest one's arrival to the fetcher's position (when that is at least
 * [[BacklogEstimate.MinHeldSpanMillis]]; a burst says nothing of a rate). It is an estimate: it assumes the records
 * ahead arrived at the rate of those just read (a quiet stream's rate falls as idle reads move through empty time);
 * with no rate yet, only the buffered records count.
 */
private[source] final class BacklogEstimate {
  import BacklogEstimate.Seen
  private var seen = Map.empty[ShardKey, Seen]

  /**
   * A reading of `key`: `behind` its MillisBehindLatest, said by a call that returned at `measuredAtMillis`;
   * `records` and `bytes` what its fetcher read in all so far. `continuous`: the shard's readers go on reading after
   * the reading (real-time tasks, which report only when their batch ends), so the estimate is the one at the reading
   * (the rate times `behind`) until the next, rather than growing with the time since it.
   */
  def observe(
      key: ShardKey,
      measuredAtMillis: Long,
      behind: Long,
      records: Long,
      bytes: Long,
      held: Option[HeldRecords] = None,
      continuous: Boolean = false): Unit = synchronized {
    val frozenAt = if (continuous) Some(measuredAtMillis) else None
    val at = measuredAtMillis - behind
    // The rate of the records held, for a shard whose rate is not known yet.
    def ofHeld: Option[(Double, Double)] = held.collect {
      case h if h.records > 0 && at - h.oldestArrivalMillis >= BacklogEstimate.MinHeldSpanMillis =>
        val span = (at - h.oldestArrivalMillis).toDouble
        (h.records / span, h.bytes / span)
    }
    seen.get(key) match {
      case None => seen += key -> Seen(at, records, bytes, ofHeld, frozenAt)
      case Some(before) if at > before.streamMillis =>
        val span = (at - before.streamMillis).toDouble
        val now = (math.max(0L, records - before.records) / span, math.max(0L, bytes - before.bytes) / span)
        val rates = before.rates.fold(now) { case (r, b) => ((r + now._1) / 2, (b + now._2) / 2) }
        seen += key -> Seen(at, records, bytes, Some(rates), frozenAt)
      // No move in the stream's time (a clock step, a stale report): the records read count in the next span.
      case Some(before) => if (before.rates.isEmpty) seen += key -> before.copy(rates = ofHeld, frozenAt = frozenAt)
    }
  }

  /**
   * Records and bytes estimated between the fetcher's position in `key` and the tip, at `nowMillis` (at the reading,
   * for a shard read continuously).
   */
  def aheadOfFetcher(key: ShardKey, nowMillis: Long): (Long, Long) = synchronized {
    seen.get(key).flatMap { s =>
      s.rates.map(_ -> math.max(0L, s.frozenAt.fold(nowMillis)(math.min(_, nowMillis)) - s.streamMillis))
    }.fold((0L, 0L)) {
      case ((r, b), span) => (math.round(r * span), math.round(b * span))
    }
  }

  def forget(gone: Set[ShardKey]): Unit = synchronized(seen --= gone)
}

private object BacklogEstimate {

  /** The shortest span of arrival times the records held must cover to give a rate. */
  val MinHeldSpanMillis = 1000L

  /**
   * Where a shard's fetcher was in the stream's time, what it had read by then, the rates learnt so far, and for a
   * shard read continuously when that was measured.
   */
  private final case class Seen(
      streamMillis: Long,
      records: Long,
      bytes: Long,
      rates: Option[(Double, Double)],
      frozenAt: Option[Long] = None)
}
