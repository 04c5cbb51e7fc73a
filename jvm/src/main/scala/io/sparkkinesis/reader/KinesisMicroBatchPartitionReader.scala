package io.sparkkinesis.reader

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.read.PartitionReader
import org.apache.spark.util.LongAccumulator

import io.sparkkinesis.fetching.{BufferedRecord, RangeReader}

/**
 * Executor side of one micro-batch partition, its shards' ranges one after the other: each comes from this
 * executor's prefetch buffer when it holds it, otherwise it is read again from Kinesis by sequence number
 * ([[RangeReader]]). Either way the rows are exactly the records in the ranges, so retries, speculative copies and
 * second actions see the same data.
 */
private[sparkkinesis] final class KinesisMicroBatchPartitionReader(
    p: KinesisMicroBatchInputPartition,
    columns: KinesisSchema,
    dataLoss: Option[LongAccumulator] = None)
  extends PartitionReader[InternalRow] {
  private val ranges = p.ranges.iterator
  private var rangeReaders = List.empty[RangeReader]
  private var converter: RecordConverter = _
  private var records: Iterator[BufferedRecord] = Iterator.empty
  private var current: InternalRow = _

  /** Opens the next range: from the buffer if it holds the whole range, else from Kinesis. */
  private def open(r: ShardRange): Unit = {
    converter = new RecordConverter(columns, r.stream.name, r.key.shardId)
    records = r.to.flatMap(to => ShardSessions.shared.buffer(p.sourceId, r.key).flatMap(_.slice(r.from, to))) match {
      case Some(buffered) => buffered.iterator
      case None =>
        val reader = new RangeReader(p.connection, r.stream, r.key, r.from, r.to, p.fetch, r.firstSequence)()
        rangeReaders = reader :: rangeReaders
        reader.iterator
    }
  }

  override def next(): Boolean = {
    while (!records.hasNext && ranges.hasNext) open(ranges.next())
    if (records.hasNext) {
      current = converter.toRow(records.next())
      true
    } else false
  }

  override def get(): InternalRow = current

  override def close(): Unit =
    for (counter <- dataLoss) {
      val lost = rangeReaders.map(_.dataLoss).sum
      if (lost > 0) counter.add(lost)
    }
}
