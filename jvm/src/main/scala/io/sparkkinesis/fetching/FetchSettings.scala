package io.sparkkinesis.fetching

/**
 * How executors read a shard: the per-shard read budget (records per call, calls at least `minPeriodMillis`
 * apart, `idlePeriodMillis` after an empty answer at the tip, at most `maxBytesPerSecond`), the executor's buffer
 * bound and what trimmed records mean.
 */
private[sparkkinesis] final case class FetchSettings(
    maxRecordsPerCall: Int,
    minPeriodMillis: Long,
    idlePeriodMillis: Long = 1000L,
    maxBytesPerSecond: Long = 2L * 1024 * 1024,
    bufferBytes: Long = 256L * 1024 * 1024,
    failOnDataLoss: Boolean = true)
