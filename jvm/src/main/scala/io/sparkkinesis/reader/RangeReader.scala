package io.sparkkinesis.reader

import io.sparkkinesis.aws.KinesisClients
import io.sparkkinesis.errors.KinesisErrors
import io.sparkkinesis.offsets.ShardPosition
import io.sparkkinesis.prefetch.BufferedRecord
import io.sparkkinesis.source.KinesisMicroBatchInputPartition

/**
 * Reads a planned range (from, to] of one shard straight from Kinesis, by sequence number: used when the
 * prefetch buffer does not hold it (another executor, a restart, a buffer that was dropped).
 */
final class RangeReader(p: KinesisMicroBatchInputPartition) {

  def iterator: Iterator[BufferedRecord] = new Iterator[BufferedRecord] {
    private val (start, _) = ShardPosition.resumeFrom(p.from)
    private val fetcher = new ShardFetcher(KinesisClients.sync(p.connection), p.stream, p.key.shardId, start,
      p.fetch.maxRecordsPerCall, p.fetch.minPeriodMillis, p.fetch.failOnDataLoss)
    private var page: Iterator[BufferedRecord] = Iterator.empty
    private var done = false
    private var nextRecord: Option[BufferedRecord] = None

    override def hasNext: Boolean = {
      while (nextRecord.isEmpty && !done) {
        if (page.hasNext) {
          val r = page.next()
          if (ShardPosition.includes(p.from, r.position)) {
            if (r.position.isAfter(p.to)) done = true
            else {
              nextRecord = Some(r)
              if (r.position == p.to) done = true
            }
          }
        } else if (fetcher.shardEnded) {
          throw KinesisErrors.rangeUnavailable(p.key.toString, s"the shard ended before the planned end ${p.to}")
        } else {
          page = fetcher.fetch().records.iterator.flatMap(BufferedRecord.fromKinesis)
        }
      }
      nextRecord.isDefined
    }

    override def next(): BufferedRecord = {
      if (!hasNext) throw new NoSuchElementException
      val r = nextRecord.get
      nextRecord = None
      r
    }
  }
}
