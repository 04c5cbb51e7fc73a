package io.sparkkinesis.fetching

/**
 * When a shard may be read again after a page: the one pacing rule of the prefetch buffers and of real-time tasks.
 * At most `maxFetchRate` bytes per second from a shard (a large page holds the next call back), and between calls:
 *  - GetRecords: `minFetchPeriod`; `idleFetchPeriod` after an empty answer at the tip, except in real-time mode,
 *    which keeps looking every `minFetchPeriod` for the next record's latency;
 *  - a pushed (fan-out) fetcher, whose empty answer cost no call: `minFetchPeriod` for the prefetch rounds; at once
 *    in real-time mode, whose task waits for the fetcher's records to come (`ShardFetcher.readyAt`).
 */
private[sparkkinesis] object Pacing {

  /** Milliseconds from a page until the next call, for a page of `pageBytes` with `settings`. */
  def pauseMillis(
      settings: FetchSettings,
      pageBytes: Long,
      emptyAtTip: Boolean,
      pushed: Boolean,
      realTime: Boolean): Long = {
    val between =
      if (pushed) { if (realTime) 0L else settings.minPeriodMillis }
      else if (emptyAtTip && !realTime) settings.idlePeriodMillis
      else settings.minPeriodMillis
    val rate = if (settings.maxBytesPerSecond > 0) pageBytes * 1000 / settings.maxBytesPerSecond else 0L
    math.max(between, rate)
  }
}
