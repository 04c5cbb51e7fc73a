package io.sparkkinesis.fetching

import io.sparkkinesis.aws.{AwsConnection, StreamRef}
import io.sparkkinesis.errors.KinesisErrors
import io.sparkkinesis.offsets.{RecordPosition, ShardKey, ShardPosition}

/**
 * Reads a planned range (from, end] of one shard straight from Kinesis, by sequence number: used when the
 * prefetch buffer does not hold it (another executor, a restart, a buffer that was dropped). Without an `end`, the
 * range runs to the end of the shard, which the plan saw closed: a closed shard's records no longer change.
 */
private[sparkkinesis] final class RangeReader(
    connection: AwsConnection,
    stream: StreamRef,
    key: ShardKey,
    from: ShardPosition,
    end: Option[RecordPosition],
    settings: FetchSettings) {

  def iterator: Iterator[BufferedRecord] = new Iterator[BufferedRecord] {
    private val (start, _) = ShardPosition.resumeFrom(from)
    private val fetcher = ShardFetchers.open(connection, stream, key.shardId, start, settings)
    private var page: Iterator[BufferedRecord] = Iterator.empty
    private var done = false
    private var nextRecord: Option[BufferedRecord] = None

    override def hasNext: Boolean = {
      while (nextRecord.isEmpty && !done) {
        if (page.hasNext) {
          val r = page.next()
          if (ShardPosition.includes(from, r.position)) {
            if (end.exists(r.position.isAfter)) done = true
            else {
              nextRecord = Some(r)
              if (end.contains(r.position)) done = true
            }
          }
        } else if (fetcher.shardEnded) {
          end.foreach(e =>
            throw KinesisErrors.rangeUnavailable(key.toString, s"the shard ended before the planned end $e"))
          done = true
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
