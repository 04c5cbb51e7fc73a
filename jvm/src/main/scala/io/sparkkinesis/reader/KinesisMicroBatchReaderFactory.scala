package io.sparkkinesis.reader

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReader, PartitionReaderFactory}
import org.apache.spark.util.LongAccumulator

/**
 * `dataLoss` counts, on the driver, the losses batch tasks meet re-reading ranges (failOnDataLoss=false). It travels
 * in the factory, not in the partitions: the factory is deserialized inside the running task, which is what
 * registers an accumulator with the task so its updates reach the driver. The rows have the read's `columns`.
 */
private[sparkkinesis] final case class KinesisMicroBatchReaderFactory(
    columns: KinesisSchema,
    dataLoss: Option[LongAccumulator] = None)
  extends PartitionReaderFactory {
  override def createReader(partition: InputPartition): PartitionReader[InternalRow] =
    new KinesisMicroBatchPartitionReader(partition.asInstanceOf[KinesisMicroBatchInputPartition], columns, dataLoss)
}
