package io.sparkkinesis.reader

import io.sparkkinesis.aws.RetryPolicy
import io.sparkkinesis.fetching.{BufferedRecord, FetchCounts, FetchSettings, ShardFetcher, ShardReading}
import io.sparkkinesis.offsets.{ShardKey, ShardPosition}

/**
 * One shard of a real-time task ([[KinesisRealTimePartitionReader]]): where it stands (after the last record handed
 * on), the fetcher reading it, the page being handed on, when it may be looked at again, and what it handed on in
 * this batch. Its fetcher outlives the batch: [[takeParked]] takes the one the shard's task of the batch before parked
 * in the executor's [[ShardSessions]], [[release]] parks it again at the batch's end (or closes it).
 */
private[reader] final class RealTimeShard(
    val key: ShardKey,
    var position: ShardPosition,
    columns: KinesisSchema,
    val retries: RetryPolicy#Retries) {
  val converter = new RecordConverter(columns, key.stream, key.shardId)
  var fetcher: Option[ShardFetcher] = None
  var page: Iterator[BufferedRecord] = Iterator.empty

  /** The fetcher returned the shard's last page: once `page` is drained, the shard has ended. */
  var lastPage = false

  /** Not looked at before: the shard's rate, or its backoff after a failure. */
  var dueAt = 0L

  /** The records handed on in this batch, and their bytes (data and partition key), for the source's metrics. */
  var delivered = 0L
  var deliveredBytes = 0L

  /** How long the shard's last look took (the batch's last look is timed to end before the deadline). */
  var lookMillis = 0L
  var millisBehindLatest: Option[Long] = None

  /** Counts of the fetchers closed so far. */
  private var closedCounts = FetchCounts.Zero
  def done: Boolean = position == ShardPosition.Ended
  def readable: Boolean = !done && !lastPage

  /** When the shard may next give records: its own time, and its fetcher's (a pushed one: once records came). */
  def nextLookAt: Long = math.max(dueAt, fetcher.fold(Long.MinValue)(_.readyAt))

  /** Hands on the next record of the page, if any, and moves the shard past it. */
  def next(): Option[BufferedRecord] =
    if (!page.hasNext) None
    else {
      val r = page.next()
      position = ShardPosition.After(r.position)
      delivered += 1
      deliveredBytes += r.size
      Some(r)
    }

  /**
   * Takes the fetcher parked for the shard of query `sourceId` if it stands where the shard starts and reads as
   * `fetch` and `closed` say, with its records not handed on; `wake` is called when it may have more.
   */
  def takeParked(
      sessions: ShardSessions,
      sourceId: String,
      fetch: FetchSettings,
      closed: Boolean,
      wake: () => Unit): Unit =
    sessions.take(sourceId, key, position, fetch, closed).foreach { parked =>
      parked.fetcher.whenReady(() => wake())
      fetcher = Some(parked.fetcher)
      page = parked.leftover.iterator
      // Its counts so far belong to earlier batches.
      closedCounts = FetchCounts.Zero - FetchCounts.of(parked.fetcher)
    }

  /**
   * At the task's end: parks the fetcher for the next batch when `park` (the batch ended as planned) and the shard
   * can go on with it (still readable, no failure in a row, the fetcher not broken), else closes it.
   */
  def release(park: Boolean, sessions: ShardSessions, sourceId: String, fetch: FetchSettings, closed: Boolean): Unit =
    fetcher match {
      case Some(f) if park && readable && retries.count == 0 && !f.broken =>
        sessions.give(sourceId, key, f, position, page.toVector, fetch, closed)
        fetcher = None
      case _ => closeFetcher()
    }

  def closeFetcher(): Unit = {
    fetcher.foreach { f =>
      closedCounts = closedCounts + FetchCounts.of(f)
      f.close()
    }
    fetcher = None
  }

  /** What the shard's reading showed in this batch, for the source's metrics; `location`: this executor. */
  def report(location: String): ShardReading =
    ShardReading(key, millisBehindLatest, fetcher.fold(closedCounts)(f => closedCounts + FetchCounts.of(f)), location,
      deliveredRecords = delivered, deliveredBytes = deliveredBytes)
}
