package io.sparkkinesis.metrics

/**
 * What a query's source knows of one stream it reads, on the driver: lag over the shards it is reading
 * (MillisBehindLatest, average and largest), the backlog estimate (`pendingRecords`, `pendingBytes`: see
 * `source.BacklogEstimate`), and running totals of throttled calls and of the records and bytes planned into batches.
 */
private[sparkkinesis] final case class ReadStats(
    stream: String,
    avgMsBehindLatest: Double,
    maxMsBehindLatest: Long,
    pendingRecords: Long,
    pendingBytes: Long,
    throttledCalls: Long,
    recordsRead: Long,
    bytesRead: Long)

/**
 * What a query's sink wrote, running totals over its committed batches. `stream`: the `streamName` option, None when
 * each row names its stream.
 */
private[sparkkinesis] final case class WriteStats(
    stream: Option[String],
    recordsWritten: Long,
    bytesWritten: Long,
    throttledRecords: Long)

/** One query's figures at one moment. */
private[sparkkinesis] final case class QueryStats(reads: Seq[ReadStats], writes: Option[WriteStats])

private[sparkkinesis] object QueryStats {
  val Empty: QueryStats = QueryStats(Nil, None)
}
