package io.sparkkinesis.reader

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.unsafe.types.UTF8String

import io.sparkkinesis.fetching.BufferedRecord

/** Turns one Kinesis record (or one de-aggregated user record) of a shard into a row of `columns`. */
private[sparkkinesis] final class RecordConverter(columns: KinesisSchema, streamName: String, shardId: String) {
  private val stream = UTF8String.fromString(streamName)
  private val shard = UTF8String.fromString(shardId)

  def toRow(r: BufferedRecord): InternalRow =
    toRow(r.data, r.partitionKey, r.position.sequenceNumber, r.position.subSequence, r.arrivalMillis)

  def toRow(
      data: Array[Byte],
      partitionKey: String,
      sequenceNumber: String,
      subSequence: Long,
      arrivalMillis: Long): InternalRow =
    columns.row(data, stream, shard, UTF8String.fromString(partitionKey), UTF8String.fromString(sequenceNumber),
      subSequence, arrivalMillis * 1000L)
}
