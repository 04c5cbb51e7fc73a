package io.sparkkinesis.fetching

import io.sparkkinesis.offsets.ShardKey

/**
 * What reading one shard showed, for the source's metrics: how far behind the stream's tip its last read was, what
 * the reading cost and met (`counts`: running totals for a prefetch buffer; a real-time task's cover its batch and
 * are added up on the driver), the records and bytes held in memory for later batches (none in real-time mode), and
 * the executor that read it, and when the call that measured `millisBehindLatest` returned (`measuredAtMillis`, by
 * the executor's clock; None where not known), and what its buffer holds (`held`, for the backlog estimate). Prefetch
 * rounds report it within each shard's cut (`reader.ShardCut`); real-time tasks report it alone, with the records
 * and bytes they handed on in their batch (`deliveredRecords`, `deliveredBytes`; a prefetch round's are in its cut).
 */
private[sparkkinesis] final case class ShardReading(
    key: ShardKey,
    millisBehindLatest: Option[Long],
    counts: FetchCounts,
    location: String,
    bufferedRecords: Long = 0L,
    bufferedBytes: Long = 0L,
    measuredAtMillis: Option[Long] = None,
    held: Option[HeldRecords] = None,
    deliveredRecords: Long = 0L,
    deliveredBytes: Long = 0L)

/**
 * The records a prefetch buffer holds (those of the next batch among them): how many, their bytes, and when the
 * oldest arrived in the stream (its approximate arrival timestamp).
 */
private[sparkkinesis] final case class HeldRecords(records: Long, bytes: Long, oldestArrivalMillis: Long)
