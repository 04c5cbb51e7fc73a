package io.sparkkinesis.reader

import scala.collection.mutable.ArrayBuffer
import scala.util.control.NonFatal

import org.apache.spark.internal.Logging
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.read.streaming.{PartitionOffset, SupportsRealTimeRead}
import org.apache.spark.sql.connector.read.streaming.SupportsRealTimeRead.RecordStatus

import io.sparkkinesis.aws.{KinesisClients, ShardDescription, ShardListing}
import io.sparkkinesis.errors.KinesisException
import io.sparkkinesis.fetching.{BufferedRecord, ShardFetcher, ShardFetchers}
import io.sparkkinesis.offsets.{ShardKey, ShardPosition, StartPosition}
import io.sparkkinesis.prefetch.ShardReport

/**
 * Executor side of one long-running real-time mode task: reads its shards from where the batch starts until Spark's
 * deadline for the batch, and hands each record on as soon as it is read, with its ApproximateArrivalTimestamp as
 * the arrival time (so Spark's latency metrics measure from the put). Each shard is read through the fetcher seam
 * (GetRecords every `minFetchPeriod`, or enhanced fan-out, looked at every few milliseconds since an empty look costs
 * no call), at most `maxFetchRate` bytes per second a shard; a task with several shards (`shardsPerTask`) takes
 * their records in turn. A call the service throttles
 * does not hold the task: that shard is looked at again after a backoff while the others go on.
 *
 * A shard read to its end (split or merged away while the task runs) is followed by its children, found by a
 * ListShards call: each child whose every parent this task read to the end, or that ended before the batch began,
 * is read from its trim horizon in the same task, after every record of its parents (so per-key order holds).
 * Any other child (a merged shard whose other parent another task reads) is left to the next batch's plan.
 *
 * [[getOffset]] is the position of each shard after the last record handed on, which is where the next batch, or a
 * restart from the checkpoint, continues. Records read but not handed on before the deadline are read again then.
 * With it go the task's reports of its shards for the source's metrics: the last MillisBehindLatest, the records
 * handed on and the calls made in this batch.
 */
private[sparkkinesis] final class KinesisRealTimePartitionReader(
    p: KinesisRealTimeInputPartition,
    open: (ShardKey, StartPosition) => ShardFetcher = null,
    clock: () => Long = () => System.currentTimeMillis(),
    sleep: Long => Unit = Thread.sleep,
    list: String => Seq[ShardDescription] = null)
  extends SupportsRealTimeRead[InternalRow] with Logging {
  import KinesisRealTimePartitionReader._

  /** Shards known to be closed: the plan's, and children found closed when adopted. Read by GetRecords. */
  private var closed: Set[ShardKey] = p.closed

  private val openFetcher: (ShardKey, StartPosition) => ShardFetcher = Option(open).getOrElse((key, start) =>
    ShardFetchers.open(p.connection, p.streams(key.stream), key.shardId, start, p.fetch, closed(key)))

  private val listShards: String => Seq[ShardDescription] = Option(list).getOrElse(stream =>
    ShardListing.list(p.streams(stream))(KinesisClients.sync(p.connection).listShards))

  private final class Shard(val key: ShardKey, var position: ShardPosition) {
    val converter = new RecordConverter(key.stream, key.shardId)
    var fetcher: Option[ShardFetcher] = None
    var page: Iterator[BufferedRecord] = Iterator.empty

    /** The fetcher returned the shard's last page: once `page` is drained, the shard has ended. */
    var lastPage = false
    var dueAt = 0L
    var failures = 0
    var millisBehindLatest: Option[Long] = None
    var records = 0L
    var bytes = 0L

    /** Counts of the fetchers closed so far: (calls, throttled, data loss, renewals, subscribe failures). */
    private var closedCounts = Seq(0L, 0L, 0L, 0L, 0L)
    private def counts(f: ShardFetcher) = Seq(f.calls, f.throttled, f.dataLoss, f.renewals, f.subscribeFailures)
    def done: Boolean = position == ShardPosition.Ended
    def readable: Boolean = !done && !lastPage

    def closeFetcher(): Unit = {
      fetcher.foreach { f =>
        closedCounts = closedCounts.zip(counts(f)).map { case (a, b) => a + b }
        f.close()
      }
      fetcher = None
    }

    def report: ShardReport = {
      val Seq(calls, throttled, dataLoss, renewals, failed) =
        fetcher.fold(closedCounts)(f => closedCounts.zip(counts(f)).map { case (a, b) => a + b })
      ShardReport(key, position, records, bytes, 0L, 0L, millisBehindLatest, millisBehindLatest.contains(0L), done,
        pastCutoff = false, 0L, calls, throttled, dataLoss, location = "", subscriptionsRenewed = renewals,
        subscriptionsFailed = failed)
    }
  }

  private val shards = ArrayBuffer(p.shards.map { case (k, at) => new Shard(k, at) }: _*)
  private var turn = 0
  private var current: InternalRow = _

  override def nextWithTimeout(timeoutMs: java.lang.Long): RecordStatus = nextWithTimeout(clock(), timeoutMs)

  override def nextWithTimeout(startTimeMs: java.lang.Long, timeoutMs: java.lang.Long): RecordStatus = {
    val deadline = startTimeMs + timeoutMs
    while (true) {
      val record = take()
      if (record.isDefined) return RecordStatus.newStatusWithArrivalTimeMs(record.get.arrivalMillis)
      val now = clock()
      if (now >= deadline || (shards.nonEmpty && shards.forall(_.done)))
        return RecordStatus.newStatusWithoutArrivalTime(false)
      val live = shards.filter(_.readable)
      if (live.isEmpty) sleep(deadline - now)
      else {
        val next = live.minBy(_.dueAt)
        if (next.dueAt > now) sleep(math.min(next.dueAt, deadline) - now)
        else fill(next, now)
      }
    }
    throw new IllegalStateException("unreachable")
  }

  /** The next record of the shards, taken in turn, and the shards whose last page is drained marked ended. */
  private def take(): Option[BufferedRecord] = {
    var i = 0
    while (i < shards.size) {
      val index = (turn + i) % shards.size
      val s = shards(index)
      if (s.page.hasNext) {
        val r = s.page.next()
        s.position = ShardPosition.After(r.position)
        s.records += 1
        s.bytes += r.size
        current = s.converter.toRow(r)
        turn = (index + 1) % shards.size
        return Some(r)
      }
      if (s.lastPage && !s.done) {
        s.position = ShardPosition.Ended
        s.closeFetcher()
        adoptChildren(s.key)
      }
      i += 1
    }
    None
  }

  /** The children of `ended` that this task may read now added to its shards (see the class comment). */
  private def adoptChildren(ended: ShardKey): Unit = {
    val listed =
      try listShards(ended.stream)
      catch {
        case NonFatal(e) =>
          logWarning(s"Shard ${ended.shardId} of stream '${ended.stream}' ended; its children are read from the " +
            s"next batch, since listing the shards failed: $e")
          Nil
      }
    val endedParents = shards.filter(_.done).map(_.key).toSet ++ p.endedBefore
    listed.filter(_.parents.contains(ended.shardId)).map(d =>
      (ShardKey(ended.stream, d.shardId), d.parents, d.isClosed))
      .foreach { case (child, parents, childClosed) =>
        if (!shards.exists(_.key == child) && parents.forall(id => endedParents.contains(ShardKey(ended.stream, id)))) {
          if (childClosed) closed += child
          logInfo(s"Reading shard ${child.shardId} of stream '${child.stream}', a child of ended shard " +
            s"${ended.shardId}, in this batch")
          shards += new Shard(child, ShardPosition.NotStarted(StartPosition.TrimHorizon))
        }
      }
  }

  private def fill(s: Shard, now: Long): Unit = {
    val fetcher = s.fetcher.getOrElse {
      val f = openFetcher(s.key, ShardPosition.resumeFrom(s.position)._1)
      s.fetcher = Some(f)
      f
    }
    try {
      val fetched = fetcher.fetch(patient = s.failures >= PatientAfterFailures)
      s.failures = 0
      val from = s.position
      // A resumed KPL aggregate comes again whole: its user records up to `from` are skipped.
      s.page = fetched.records.iterator.flatMap(BufferedRecord.fromKinesis).filter(r =>
        ShardPosition.includes(from, r.position))
      s.lastPage = fetched.shardEnded
      s.millisBehindLatest = Some(fetched.millisBehindLatest)
      // At most `maxFetchRate` bytes per second from a shard: a large page holds the next look back.
      val pageBytes = fetched.records.iterator.map(_.data().asByteArrayUnsafe().length.toLong).sum
      val rateWait = if (p.fetch.maxBytesPerSecond > 0) pageBytes * 1000 / p.fetch.maxBytesPerSecond else 0L
      s.dueAt = now + math.max(rateWait, if (fetcher.pushed) PushedLookMillis else p.fetch.minPeriodMillis)
    } catch {
      case e: KinesisException if e.condition == "KINESIS_RETRIES_EXHAUSTED" && s.failures < PatientAfterFailures =>
        s.failures += 1
        s.dueAt = now + math.min(MaxBackoffMillis, math.max(100L, p.fetch.minPeriodMillis) << s.failures)
    }
  }

  override def next(): Boolean = nextWithTimeout(clock(), 0L).hasRecord

  override def get(): InternalRow = current

  override def getOffset: PartitionOffset =
    KinesisPartitionOffset(shards.map(s => s.key -> s.position).toMap, shards.map(_.report).toSeq)

  override def close(): Unit = shards.foreach(_.closeFetcher())
}

private[sparkkinesis] object KinesisRealTimePartitionReader {

  /** How often a shard read by enhanced fan-out is looked at: its records are already on this executor. */
  val PushedLookMillis = 5L

  /** Throttled (or failing) calls on a shard answered by a backoff before one call may retry, and fail, in place. */
  val PatientAfterFailures = 6

  val MaxBackoffMillis = 5000L
}
