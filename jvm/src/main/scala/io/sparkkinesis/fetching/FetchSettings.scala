package io.sparkkinesis.fetching

/**
 * How executors read a shard: the per-shard read budget (records per call, calls at least `minPeriodMillis`
 * apart, `idlePeriodMillis` after an empty answer at the tip, at most `maxBytesPerSecond`), the executor's buffer
 * bound and what trimmed records mean. `mode`: polling, or enhanced fan-out with each stream's consumer when the
 * query reads with `consumerMode=efo`; the executors' prefetch buffers and real-time tasks then read those streams by
 * SubscribeToShard, while re-reads of planned ranges and the driver's own looks keep to GetRecords.
 * `dropOutOfRangeSubRecords`: whether user records of KPL aggregates outside their shard's hash key range are
 * dropped, as the KCL drops them ([[SubRecordFilter]]). `service`: the service the shards live in ([[ShardService]]:
 * Kinesis, or DynamoDB Streams for `format("dynamodb-streams")`).
 */
private[sparkkinesis] final case class FetchSettings(
    maxRecordsPerCall: Int,
    minPeriodMillis: Long,
    idlePeriodMillis: Long = 1000L,
    maxBytesPerSecond: Long = 2L * 1024 * 1024,
    bufferBytes: Long = 256L * 1024 * 1024,
    failOnDataLoss: Boolean = true,
    mode: ReadMode = ReadMode.Polling,
    dropOutOfRangeSubRecords: Boolean = true,
    service: ShardService = ShardService.Kinesis)
