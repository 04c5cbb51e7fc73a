package io.sparkkinesis.reader

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReader, PartitionReaderFactory}

/** Builds the readers of a batch read's tasks, whose rows have the read's `columns`. */
private[sparkkinesis] final case class KinesisBatchReaderFactory(columns: KinesisSchema)
  extends PartitionReaderFactory {
  override def createReader(partition: InputPartition): PartitionReader[InternalRow] =
    new KinesisBatchPartitionReader(partition.asInstanceOf[KinesisBatchInputPartition], columns)
}
