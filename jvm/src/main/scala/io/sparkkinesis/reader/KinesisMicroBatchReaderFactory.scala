package io.sparkkinesis.reader

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReader, PartitionReaderFactory}

private[sparkkinesis] object KinesisMicroBatchReaderFactory extends PartitionReaderFactory {
  override def createReader(partition: InputPartition): PartitionReader[InternalRow] =
    new KinesisMicroBatchPartitionReader(partition.asInstanceOf[KinesisMicroBatchInputPartition])
}
