package io.sparkkinesis.writer

import java.util.concurrent.ThreadLocalRandom
import java.util.concurrent.locks.ReentrantLock

import scala.collection.mutable

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.metric.CustomTaskMetric
import org.apache.spark.sql.connector.write.WriterCommitMessage

import io.sparkkinesis.aws.RetryPolicy
import io.sparkkinesis.compat.BulkDataWriter
import io.sparkkinesis.errors.KinesisErrors

/** What a task reports when its records have all landed: its counters, summed per batch on the driver. */
private[sparkkinesis] final case class KinesisWriterCommitMessage(counts: SinkCounts) extends WriterCommitMessage

private[sparkkinesis] object KinesisDataWriter {
  private val MaxHashKey = BigInt(2).pow(128) - 1
  private val MaxPartitionKeyChars = 256
}

/**
 * Executor side of a write: turns each row into a record (or, with `aggregation=kpl`, into part of an
 * aggregate, [[KplRecordPacker]]), checks it against the record size limit, and hands it to the
 * [[PutRecordsSender]]; with `aggregation=kpl`, an aggregate that lands in a shard other than the one it was packed
 * for goes to [[MisplacedRecords]].
 * `commit` returns only when every record of the task landed, so a committed task never loses records.
 *
 * With `maxRecordDelay` a [[SendTicker]] also sends what the writer holds at that period, so in a long-running
 * task (real-time mode) a record does not wait for a full call or the task's end. The writer's lock keeps the
 * ticker and the task apart; a tick that finds the task at work skips, the task sending anyway. A tick holds the
 * lock only to take what is to leave, and makes the calls after letting it go, so a call that waits (credentials,
 * a slow endpoint) never blocks the task; the ListShards that follows a reshard with `aggregation=kpl`
 * ([[MisplacedRecords]]) runs on a thread of its own, the record waiting for it. `commit`, `abort` and `close` stop
 * the ticks first: after they return, no tick sends anything.
 */
private[sparkkinesis] final class KinesisDataWriter(
    options: SinkOptions,
    schema: SinkSchema,
    partitionId: Int,
    taskId: Long)
  extends BulkDataWriter {
  import KinesisDataWriter._

  private val counters = new SinkCounters
  private val client = options.clientFactory.client(options.connection,
    options.maxInFlightRequests * Runtime.getRuntime.availableProcessors())
  private val streams = new SinkStreams(options.stream, options.connection.region, schema.streamColumn)
  private val describing = RetryPolicy.Default.copy(contact = options.retry.contact)
  // The limits of writes to a stream whose record limit was not asked for: the options', else the service's defaults.
  private val defaultLimits = options.limits.forStream(SinkLimits.DefaultRecordBytes)
  // Per target stream (by number) whose own record limit was learned. Used under the writer's lock only, like the
  // sender.
  private val learned = mutable.HashMap.empty[Int, PutLimits]
  private def limitsOf(stream: Int): PutLimits = learned.getOrElse(stream, defaultLimits)

  /**
   * The limits of writes to `stream` once something bigger than `bytes` is to go there: the stream is asked for its
   * record limit (at most once per writer, [[StreamRecordLimit]] once per executor) only when the defaults do not
   * let it through, so a write of records within 1 MiB never asks.
   */
  private def limitsFor(stream: Int, bytes: Long): PutLimits = {
    val known = limitsOf(stream)
    if (bytes <= known.maxRecordBytes || learned.contains(stream) || options.limits.maxRecordBytes.isDefined) known
    else learned.getOrElseUpdate(stream,
      options.limits.forStream(StreamRecordLimit.of(client, streams(stream), describing)))
  }
  private val kplMaps = new KplShardMaps(client, streams, describing)
  private val packer = options.aggregationMaxBytes.map(max =>
    new KplRecordPacker(kplMaps, stream => math.min(max, limitsFor(stream, max).maxRecordBytes),
      math.max(max, options.limits.maxRequestBytes.getOrElse(SinkLimits.DefaultRequestBytes))))
  // A shard listing that ends wakes the sender, which may be waiting for it (built below: it is read only then).
  private val misplaced = packer.map(new MisplacedRecords(kplMaps, _, options.retry, stream => streams(stream).toString,
      () => sender.wake()))
  private val sender: PutRecordsSender = new PutRecordsSender(client, streams,
    SenderSettings(limitsOf, options.limits.maxRecordsPerRequest,
      options.maxInFlightRequests, options.perKeyOrdering, options.retry), counters,
    (entry, shardId) => misplaced.fold(Relocation.Nothing)(_.landed(entry, shardId)))
  private var rowIndex = 0L
  private val lock = new ReentrantLock()
  private val ticking = options.maxRecordDelayMillis.map(d => SendTicker.every(d)(() => tick()))

  /**
   * On a tick's thread: under the lock only takes what is to leave (skipping when the task holds the lock), then
   * makes the calls without it, since making a call may wait (credentials, a slow endpoint).
   */
  private def tick(): Unit = {
    val calls =
      if (lock.tryLock()) {
        try sender.sendWaiting(packer.map(_.flush(unitFree)).getOrElse(Nil))
        finally lock.unlock()
      } else Nil
    calls.foreach(_.make())
  }

  /**
   * Nothing of the unit of order is in flight or waiting (`ordering=perKey`; always so without it), so its aggregate
   * may leave now.
   */
  private def unitFree(stream: Int, orderingKey: String): Boolean = !sender.holds(stream, orderingKey)

  private def locked[T](body: => T): T = {
    lock.lock()
    try body
    finally lock.unlock()
  }

  /** No tick starts any more; one under way has made its calls when this returns. Call without the lock. */
  private def stopTicking(): Unit = ticking.foreach(_.stop())

  override def write(row: InternalRow): Unit = locked(writeRow(row))

  private def writeRow(row: InternalRow): Unit = {
    val data = schema.data(row)
    if (data == null) throw badRow("has a null 'data'", "Filter such rows out or give them a value.")
    val key =
      if (schema.hasPartitionKey) schema.partitionKey(row)
      else java.lang.Long.toHexString(ThreadLocalRandom.current().nextLong())
    if (key == null || key.isEmpty)
      throw badRow("has a null or empty partition key", "Filter such rows out or give them a key.")
    if (key.length > MaxPartitionKeyChars)
      throw badRow(s"has a partition key of ${key.length} characters", "Kinesis accepts 1 to 256.")
    val hashKey = schema.explicitHashKey(row)
    if (hashKey != null && !validHashKey(hashKey))
      throw badRow(s"has an invalid explicitHashKey '$hashKey'", "Give a decimal number from 0 to 2^128 - 1.")
    val stream = streams.indexOf(schema.stream(row), position)
    val bytes = SinkSchema.recordBytes(key, data)
    val maxRecordBytes = limitsFor(stream, bytes).maxRecordBytes
    if (bytes > maxRecordBytes) {
      if (!options.dropOversizeRecords)
        throw KinesisErrors.recordTooLarge(position, bytes, maxRecordBytes)
      counters.droppedRecords += 1
    } else packer match {
      case Some(p) => p.add(stream, key, hashKey, data, position).foreach(sender.offer)
      case None => sender.offer(PutEntry(stream, key, hashKey, data, position))
    }
    rowIndex += 1
  }

  /**
   * Spark 4 hands a task's rows here and reads [[currentMetricsValues]] right after, before `commit`: sending
   * everything before returning makes the metrics complete.
   */
  override protected def writeRows(rows: java.util.Iterator[InternalRow]): Unit = {
    while (rows.hasNext) write(rows.next())
    stopTicking()
    locked(finishSending())
  }

  override def commit(): WriterCommitMessage = {
    stopTicking()
    locked(finishSending())
    publishFinalMetrics(SinkMetrics.supported.toSeq)
    KinesisWriterCommitMessage(counters.snapshot)
  }

  /** Sends every record still held and waits until all landed, or fails. */
  private def finishSending(): Unit = {
    packer.foreach(_.flush().foreach(sender.offer))
    sender.flush()
  }

  override def abort(): Unit = { stopTicking(); locked(sender.close()) }

  override def close(): Unit = { stopTicking(); locked(sender.close()) }

  override def currentMetricsValues(): Array[CustomTaskMetric] = counters.values

  private def position: String = s"row $rowIndex of partition $partitionId (task $taskId)"

  private def badRow(problem: String, fix: String) = KinesisErrors.invalidSinkRow(position, problem, fix)

  private def validHashKey(s: String): Boolean =
    s.nonEmpty && s.length <= 39 && s.forall(c => c >= '0' && c <= '9') && BigInt(s) <= MaxHashKey

}
