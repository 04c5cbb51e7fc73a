package io.sparkkinesis.reader

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.read.PartitionReader
import org.apache.spark.util.LongAccumulator

import io.sparkkinesis.fetching.{BufferedRecord, RangeReader}
import io.sparkkinesis.prefetch.PrefetchBuffers

/**
 * Executor side of one micro-batch partition: the planned range comes from this executor's prefetch buffer when it
 * holds it, otherwise it is read again from Kinesis by sequence number ([[RangeReader]]). Either way the rows are
 * exactly the records in the range, so retries, speculative copies and second actions see the same data.
 */
private[sparkkinesis] final class KinesisMicroBatchPartitionReader(
    p: KinesisMicroBatchInputPartition,
    dataLoss: Option[LongAccumulator] = None)
  extends PartitionReader[InternalRow] {
  private val converter = new RecordConverter(p.stream.name, p.key.shardId)
  private var rangeReader: Option[RangeReader] = None
  private val records: Iterator[BufferedRecord] =
    p.to.flatMap(to => PrefetchBuffers.get(p.sourceId, p.key).flatMap(_.slice(p.from, to))) match {
      case Some(buffered) => buffered.iterator
      case None =>
        val reader = new RangeReader(p.connection, p.stream, p.key, p.from, p.to, p.fetch, p.firstSequence)()
        rangeReader = Some(reader)
        reader.iterator
    }
  private var current: InternalRow = _

  override def next(): Boolean =
    if (records.hasNext) {
      current = converter.toRow(records.next())
      true
    } else false

  override def get(): InternalRow = current

  override def close(): Unit =
    for (reader <- rangeReader; counter <- dataLoss if reader.dataLoss > 0) counter.add(reader.dataLoss)
}
