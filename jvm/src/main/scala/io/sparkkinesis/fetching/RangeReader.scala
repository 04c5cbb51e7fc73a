package io.sparkkinesis.fetching

import org.apache.spark.internal.Logging

import io.sparkkinesis.aws.{AwsConnection, StreamRef}
import io.sparkkinesis.errors.KinesisErrors
import io.sparkkinesis.offsets.{RecordPosition, ShardKey, ShardPosition, StartPosition}

/**
 * Reads a planned range (from, end] of one shard straight from Kinesis, by sequence number: used when the
 * prefetch buffer does not hold it (another executor, a restart, a buffer that was dropped). Without an `end`, the
 * range runs to the end of the shard, which the plan saw closed: a closed shard's records no longer change.
 *
 * `firstSequence` is the sequence number of the range's first record when the range starts at a position not tied
 * to a record (trim horizon, a timestamp): the range is then read from that record (AT_SEQUENCE_NUMBER), so a
 * replay after retention trimmed the head of the range is data loss, not a silently shorter batch.
 *
 * A range that can no longer reach its end ends: the shard's tip reached without the planned end (its records
 * were trimmed and no record came after them), or the shard gone. That is [KINESIS_DATA_LOSS], or with
 * `failOnDataLoss=false` a logged loss counted in [[dataLoss]] and the range ends with what could be read.
 */
private[sparkkinesis] final class RangeReader(
    connection: AwsConnection,
    stream: StreamRef,
    key: ShardKey,
    from: ShardPosition,
    end: Option[RecordPosition],
    settings: FetchSettings,
    firstSequence: Option[String] = None)(
    open: StartPosition => ShardFetcher = ShardFetchers.open(connection, stream, key.shardId, _, settings))
  extends Logging {
  private var ownLoss = 0L
  private var fetcher: ShardFetcher = _

  /** Losses met while reading the range (failOnDataLoss=false): trimmed positions skipped, a range cut short. */
  def dataLoss: Long = ownLoss + (if (fetcher == null) 0L else fetcher.dataLoss)

  private def planned: String =
    s"the planned range ${ShardPosition.describe(from)} up to " +
      end.fold("the end of the shard")(e => s"sequence number ${e.sequenceNumber}")

  private def lost(detail: String): Unit = {
    val shard = s"shard ${key.shardId} of stream '${key.stream}'"
    if (settings.failOnDataLoss) throw KinesisErrors.dataLoss(shard, detail)
    logWarning(s"Data loss on $shard: $detail. Going on (failOnDataLoss=false).")
    ownLoss += 1
  }

  def iterator: Iterator[BufferedRecord] = new Iterator[BufferedRecord] {
    private val start = firstSequence.map(StartPosition.AtSequence).getOrElse(ShardPosition.resumeFrom(from)._1)
    fetcher = open(start)
    private var page: Iterator[BufferedRecord] = Iterator.empty
    private var done = false
    private var nextRecord: Option[BufferedRecord] = None
    private var firstSeen = firstSequence.isEmpty
    private var emptyAtTip = 0

    override def hasNext: Boolean = {
      while (nextRecord.isEmpty && !done) {
        if (page.hasNext) {
          val r = page.next()
          if (!firstSeen) {
            firstSeen = true
            // (A position the fetcher found trimmed and skipped is counted there already.)
            if (r.position.sequence > BigInt(firstSequence.get) && fetcher.dataLoss == 0)
              lost(s"$planned begins at sequence number ${firstSequence.get}, but the oldest record left is " +
                r.position.sequenceNumber)
          }
          if (ShardPosition.includes(from, r.position)) {
            if (end.exists(r.position.isAfter)) done = true
            else {
              nextRecord = Some(r)
              if (end.contains(r.position)) done = true
            }
          }
        } else if (fetcher.shardEnded) {
          // A shard the fetcher took as gone (failOnDataLoss=false) has counted its loss already.
          if (fetcher.dataLoss > 0) done = true
          else {
            end.foreach(e =>
              throw KinesisErrors.rangeUnavailable(key.toString, s"the shard ended before the planned end $e"))
            done = true
          }
        } else {
          val fetched = fetcher.fetch()
          if (fetched.records.isEmpty && fetched.millisBehindLatest == 0 && !fetched.shardEnded) {
            emptyAtTip += 1
            if (emptyAtTip >= RangeReader.EmptyAtTipBeforeLoss) {
              if (fetcher.dataLoss == 0)
                lost(
                  s"$planned cannot reach its end: the shard's tip was reached without it (its records were trimmed)")
              done = true
            }
          } else emptyAtTip = 0
          val kept = fetcher.subRecords
          page = fetched.records.iterator.flatMap(BufferedRecord.fromKinesis(_, kept))
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

private[sparkkinesis] object RangeReader {

  /** Empty answers at the shard's tip (MillisBehindLatest 0) before a range that has not reached its end gives up. */
  private val EmptyAtTipBeforeLoss = 3
}
