package io.sparkkinesis.writer

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.write.{DataWriter, DataWriterFactory}
import org.apache.spark.sql.connector.write.streaming.StreamingDataWriterFactory

/** Serialized to the executors; makes one [[KinesisDataWriter]] per task, for batch and streaming writes. */
private[sparkkinesis] final class KinesisDataWriterFactory(options: SinkOptions, schema: SinkSchema)
  extends DataWriterFactory with StreamingDataWriterFactory {
  override def createWriter(partitionId: Int, taskId: Long): DataWriter[InternalRow] =
    new KinesisDataWriter(options, schema, partitionId, taskId)
  override def createWriter(partitionId: Int, taskId: Long, epochId: Long): DataWriter[InternalRow] =
    new KinesisDataWriter(options, schema, partitionId, taskId)
}
