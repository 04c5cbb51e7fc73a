package io.sparkkinesis.reader

import scala.collection.mutable.ArrayBuffer
import scala.util.control.NonFatal

import org.apache.spark.TaskContext
import org.apache.spark.internal.Logging
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.read.streaming.{PartitionOffset, SupportsRealTimeRead}
import org.apache.spark.sql.connector.read.streaming.SupportsRealTimeRead.RecordStatus

import io.sparkkinesis.aws.{Contact, Failure, RetryPolicy, ShardDescription}
import io.sparkkinesis.compat.SparkShim
import io.sparkkinesis.errors.{Condition, KinesisException}
import io.sparkkinesis.fetching.{
  BufferedRecord,
  FetchCounts,
  Pacing,
  PollingShardFetcher,
  ShardFetcher,
  ShardFetchers,
  ShardReading
}
import io.sparkkinesis.offsets.{ShardKey, ShardPosition, StartPosition}

/**
 * Executor side of one long-running real-time mode task: reads its shards from where the batch starts until Spark's
 * deadline for the batch, and hands each record on as soon as it is read, as a row of the read's `columns`, with its
 * ApproximateArrivalTimestamp as the arrival time (so Spark's latency metrics measure from the put). Each shard is
 * read through the fetcher seam (GetRecords every `minFetchPeriod`, or enhanced fan-out, whose pushed records wake
 * the task as they arrive), at most `maxFetchRate` bytes per second a shard; a task with several shards
 * (`shardsPerTask`) takes their records in turn, and between records it waits for the earliest time one of its
 * shards may give more (the fetcher's [[ShardFetcher.readyAt]], the shard's rate and backoff), or for records pushed
 * meanwhile, or Spark's deadline.
 *
 * Failures follow the connector's one failure policy, as micro-batches do: what [[Failure]] calls retryable
 * (throttling, 5xx, I/O errors) is retried under the policy of GetRecords
 * ([[PollingShardFetcher.retryPolicy]]: jittered exponential backoff, 12 attempts), an expired iterator is renewed by
 * the fetcher, a broken fan-out subscription is opened again by it; anything else fails the task with its
 * `[KINESIS_*]` error, and so does a shard whose retries are spent. The calls are impatient: a shard backing off
 * waits for its time without holding the task, whose other shards go on meanwhile.
 *
 * A shard read to its end (split or merged away while the task runs) is followed by its children, found through the
 * query's service (`fetching.ShardService.children`: a ListShards call, or DynamoDB's DescribeStream with the
 * `CHILD_SHARDS` filter): each child whose every parent this task read to the end, or that ended before the batch began,
 * is read from its trim horizon in the same task, after every record of its parents (so per-key order holds).
 * Any other child (a merged shard whose other parent another task reads) is left to the next batch's plan.
 *
 * [[getOffset]] is the position of each shard after the last record handed on, which is where the next batch, or a
 * restart from the checkpoint, continues. Records read but not handed on before the deadline are read again then.
 * With it go the task's reports of its shards for the source's metrics: the last MillisBehindLatest and the calls
 * made in this batch ([[ShardReading]]), and where the task ran (so the next batch's task of each shard runs
 * there too, where its fetcher is pooled). A task that got its slot only after the batch's end is asked for its
 * offset without ever being asked for a record: it says so (`late`), for the driver to plan fewer tasks.
 *
 * Fetchers outlive the batch: a task that ends its batch (Spark asked for [[getOffset]], nothing failed) gives each
 * shard's fetcher back to the executor's [[ShardSessions]] in [[close]] (parked there), standing after the last record handed on,
 * with the records read but not handed on; the next batch's task of the shard takes it when it starts there, so a
 * steady query makes no GetShardIterator or SubscribeToShard call at a batch's end. A fetcher that failed, whose
 * last look failed, or whose shard ended is closed instead, and so is every fetcher of a task that failed.
 */
private[sparkkinesis] final class KinesisRealTimePartitionReader(
    p: KinesisRealTimeInputPartition,
    columns: KinesisSchema,
    open: (ShardKey, StartPosition) => ShardFetcher = null,
    clock: () => Long = () => System.currentTimeMillis(),
    children: ShardKey => Seq[ShardDescription] = null,
    sessions: ShardSessions = ShardSessions.shared)
  extends SupportsRealTimeRead[InternalRow] with Logging {

  /** Shards known to be closed: the plan's, and children found closed when adopted. Read by GetRecords. */
  private var closed: Set[ShardKey] = p.closed

  /** Fetchers are pooled between batches for a query named by its source id. */
  private val pooling = p.sourceId.nonEmpty
  if (pooling) sessions.retire(p.retired)

  /** Spark asked for the task's offset, so the batch ended as planned; a failure escaped the reader. */
  private var offered = false
  private var failed = false

  /** Spark asked for a record with time left: the task got its slot before the batch's end. */
  private var asked = false

  /** This executor as a preferred location (none outside an executor). */
  private val location =
    try SparkShim.executorLocation()
    catch { case NonFatal(_) => "" }

  private val openFetcher: (ShardKey, StartPosition) => ShardFetcher = Option(open).getOrElse((key, start) =>
    ShardFetchers.open(p.connection, p.streams(key.stream), key.shardId, start, p.fetch, closed(key)))

  private val childrenOf: ShardKey => Seq[ShardDescription] = Option(children).getOrElse(ended =>
    p.fetch.service.children(p.connection, p.streams(ended.stream), ended.shardId, RetryPolicy.Default))

  /** The one failure policy, as the micro-batches' GetRecords calls have it, applied here between looks. */
  private val policy = PollingShardFetcher.retryPolicy(p.fetch.minPeriodMillis, Some(Contact.of(p.connection)))

  /** Woken by the shards' pushed fetchers when one may have something new. */
  private object arrivals {
    private var woken = false

    def wake(): Unit = synchronized { woken = true; notifyAll() }

    /** Waits until `until` (epoch millis) or a wake-up since the last wait, whichever comes first. */
    def await(until: Long): Unit = synchronized {
      var left = until - clock()
      while (!woken && left > 0) {
        wait(left)
        left = until - clock()
      }
      woken = false
    }
  }

  private def newShard(key: ShardKey, at: ShardPosition): RealTimeShard =
    new RealTimeShard(key, at, columns, new policy.Retries(s"GetRecords on shard ${key.shardId}", key.stream))

  private val shards = ArrayBuffer(p.shards.map { case (k, at) => newShard(k, at) }: _*)
  if (pooling) shards.foreach(s => s.takeParked(sessions, p.sourceId, p.fetch, closed(s.key), () => arrivals.wake()))
  logInfo(s"Real-time task of batch $batchId reads ${shards.map(s => s"${s.key.shardId} of '${s.key.stream}'")
      .mkString(", ")} on $location; fetchers taken from this executor's pool: ${shards.count(_.fetcher.isDefined)} " +
    s"of ${shards.size}")

  /** The batch of this task's job, as Spark names it in the job's properties. */
  private def batchId: String =
    Option(TaskContext.get()).flatMap(t => Option(t.getLocalProperty(KinesisRealTimePartitionReader.BatchId)))
      .getOrElse("?")

  private var turn = 0
  private var current: InternalRow = _

  override def nextWithTimeout(timeoutMs: java.lang.Long): RecordStatus = nextWithTimeout(clock(), timeoutMs)

  override def nextWithTimeout(startTimeMs: java.lang.Long, timeoutMs: java.lang.Long): RecordStatus =
    try {
      if (timeoutMs > 0) asked = true
      read(startTimeMs, timeoutMs)
    } catch { case e: Throwable => failed = true; throw e }

  private def read(startTimeMs: Long, timeoutMs: Long): RecordStatus = {
    val deadline = startTimeMs + timeoutMs
    while (true) {
      val record = take()
      if (record.isDefined) return RecordStatus.newStatusWithArrivalTimeMs(record.get.arrivalMillis)
      val now = clock()
      if (now >= deadline || (shards.nonEmpty && shards.forall(_.done)))
        return RecordStatus.newStatusWithoutArrivalTime(false)
      val next = shards.filter(_.readable).map(s => s -> lookAt(s, deadline)).minByOption(_._2)
      next match {
        case Some((s, at)) if at <= now => fill(s, now)
        case _ => arrivals.await(math.min(next.fold(deadline)(_._2), deadline))
      }
    }
    throw new IllegalStateException("unreachable")
  }

  /**
   * When to look at `s` next: its own time ([[Shard.nextLookAt]]), except the batch's last look at a polled shard,
   * which waits until just before the deadline. A look due at `t` whose successor (at `t + minFetchPeriod`) would
   * fall after the deadline is the last one, and what is put between it and the deadline would wait for the next
   * batch, after Spark's pause between batches; so it is held back to end, by the shard's last round trip, just
   * before the deadline. Calls stay at least `minFetchPeriod` apart (only held back, never brought forward), and a
   * record put just before that look waits less than `minFetchPeriod` more (docs/source.md, "Real-time mode").
   * A pushed (fan-out) shard is woken by its records and has nothing to time.
   */
  private def lookAt(s: RealTimeShard, deadline: Long): Long = {
    val own = s.nextLookAt
    val last = deadline - KinesisRealTimePartitionReader.lastLookLead(s.lookMillis, p.fetch.minPeriodMillis)
    if (s.fetcher.exists(_.pushed) || s.retries.count > 0 || own >= last || own + p.fetch.minPeriodMillis <= last) own
    else last
  }

  /** The next record of the shards, taken in turn, and the shards whose last page is drained marked ended. */
  private def take(): Option[BufferedRecord] = {
    var i = 0
    while (i < shards.size) {
      val index = (turn + i) % shards.size
      val s = shards(index)
      val next = s.next()
      if (next.isDefined) {
        current = s.converter.toRow(next.get)
        turn = (index + 1) % shards.size
        return next
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
      try childrenOf(ended)
      catch {
        case NonFatal(e) =>
          logWarning(s"Shard ${ended.shardId} of stream '${ended.stream}' ended; its children are read from the " +
            s"next batch, since looking them up failed: $e")
          Nil
      }
    val endedParents = shards.filter(_.done).map(_.key).toSet ++ p.endedBefore
    ChildShards.adoptable(ended, listed, endedParents, shards.map(_.key).toSet).foreach { case (child, childClosed) =>
      if (childClosed) closed += child
      logInfo(s"Reading shard ${child.shardId} of stream '${child.stream}', a child of ended shard " +
        s"${ended.shardId}, in this batch")
      shards += newShard(child, ShardPosition.NotStarted(StartPosition.TrimHorizon))
    }
  }

  private def fill(s: RealTimeShard, now: Long): Unit = {
    val fetcher = s.fetcher.getOrElse {
      val f = openFetcher(s.key, ShardPosition.resumeFrom(s.position)._1)
      f.whenReady(() => arrivals.wake())
      s.fetcher = Some(f)
      f
    }
    try {
      val fetched = fetcher.fetch(patient = false)
      s.lookMillis = clock() - now
      s.retries.succeeded()
      val from = s.position
      // A resumed KPL aggregate comes again whole: its user records up to `from` are skipped.
      val kept = fetcher.subRecords
      s.page = fetched.records.iterator.flatMap(BufferedRecord.fromKinesis(_, kept)).filter(r =>
        ShardPosition.includes(from, r.position))
      s.lastPage = fetched.shardEnded
      s.millisBehindLatest = Some(fetched.millisBehindLatest)
      // A pushed fetcher is looked at again when its records come (its readyAt); GetRecords every `minFetchPeriod`.
      val pageBytes = fetched.records.iterator.map(_.data().asByteArrayUnsafe().length.toLong).sum
      s.dueAt = now + Pacing.pauseMillis(p.fetch, pageBytes, emptyAtTip = false, fetcher.pushed, realTime = true)
    } catch {
      case e: KinesisException if !fetcher.broken && refused(e).isDefined =>
        // Throws once the policy gives up (or at once for what it does not retry).
        val pause = s.retries.failed(refused(e).get, System.nanoTime())
        s.dueAt = now + pause
        logDebug(s"Shard ${s.key.shardId} of stream '${s.key.stream}': ${Failure.code(refused(e).get)} " +
          s"(failure ${s.retries.count} in a row); looking again in $pause ms")
    }
  }

  /** The retryable failure an impatient call gave up on at once (see [[ShardFetcher.fetch]]), if `e` is one. */
  private def refused(e: KinesisException): Option[Throwable] =
    if (e.is(Condition.RetriesExhausted) || e.is(Condition.EndpointUnreachable))
      Option(e.getCause).filter(c => Failure.of(c).retryable)
    else None

  override def next(): Boolean = nextWithTimeout(clock(), 0L).hasRecord

  override def get(): InternalRow = current

  override def getOffset: PartitionOffset = {
    offered = true
    if (!asked)
      logWarning(s"Real-time task of batch $batchId started after its batch's end: it read none of its shards")
    KinesisPartitionOffset(shards.map(s => s.key -> s.position).toMap, shards.map(_.report(location)).toSeq,
      late = !asked)
  }

  /** Parks each shard's fetcher for the next batch when this one ended as planned (Spark asked for the offset). */
  override def close(): Unit =
    shards.foreach(s => s.release(pooling && offered && !failed, sessions, p.sourceId, p.fetch, closed(s.key)))
}

private object KinesisRealTimePartitionReader {

  /** The local property Spark gives the jobs of a streaming query's batch: its id. */
  val BatchId = "streaming.sql.batchId"

  /**
   * How long before the deadline the batch's last look at a polled shard starts: twice its last round trip and a
   * little, at least 5 ms, at most `minFetchPeriod` (a look that ends after the deadline loses nothing: its records
   * stay with the pooled fetcher and are handed on first in the next batch).
   */
  def lastLookLead(lookMillis: Long, minPeriodMillis: Long): Long =
    math.min(math.max(2 * lookMillis + 2, 5L), math.max(minPeriodMillis, 5L))
}
