package io.sparkkinesis.reader

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.unsafe.types.UTF8String
import software.amazon.awssdk.services.kinesis.model.Record

/** Turns one Kinesis record (or one de-aggregated user record) into a row of [[io.sparkkinesis.source.KinesisSchema]]. */
final class RecordConverter(streamName: String, shardId: String) {
  private val stream = UTF8String.fromString(streamName)
  private val shard = UTF8String.fromString(shardId)

  def toRow(record: Record): InternalRow =
    toRow(record.data().asByteArrayUnsafe(), record.partitionKey(), record.sequenceNumber(), 0L,
      record.approximateArrivalTimestamp().toEpochMilli)

  def toRow(data: Array[Byte], partitionKey: String, sequenceNumber: String, subSequence: Long,
            arrivalMillis: Long): InternalRow =
    new GenericInternalRow(Array[Any](
      data, stream, shard, UTF8String.fromString(partitionKey), UTF8String.fromString(sequenceNumber),
      subSequence, arrivalMillis * 1000L))
}
