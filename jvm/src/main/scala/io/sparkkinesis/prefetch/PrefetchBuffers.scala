package io.sparkkinesis.prefetch

import java.util.concurrent.ConcurrentHashMap

import io.sparkkinesis.compat.CollectionConverters._

import io.sparkkinesis.runtime.DaemonThreads
import io.sparkkinesis.aws.{AwsConnection, StreamRef}
import io.sparkkinesis.fetching.FetchSettings
import io.sparkkinesis.offsets.ShardKey

/**
 * The executor's prefetch buffers, one per (running query, shard). A buffer no task has used for two minutes is
 * dropped and its fetcher closed (a fan-out subscription with it), by a sweep every 10 s whether or not tasks still
 * run here: a shard that moved to another executor, or a query that ended without its executors hearing of it,
 * holds nothing for longer.
 */
private[sparkkinesis] object PrefetchBuffers {
  val IdleMillis: Long = 2 * 60 * 1000L
  val SweepMillis = 10000L
  private val buffers = new ConcurrentHashMap[(String, ShardKey), ShardBuffer]()

  def get(sourceId: String, key: ShardKey): Option[ShardBuffer] = Option(buffers.get((sourceId, key)))

  /**
   * The shard's buffer, made with `fetch` if there is none. A buffer made another way (a retried attempt's, which
   * reads by GetRecords where the query reads by fan-out) is replaced, and closed, when `replaceMisfit`: a task's
   * first attempt, which reads the way the query does, so one retried attempt does not turn a shard's reading on
   * this executor to GetRecords for good. A retried attempt passes false and reads with the buffer it finds.
   */
  def getOrCreate(
      sourceId: String,
      key: ShardKey,
      stream: StreamRef,
      conn: AwsConnection,
      fetch: FetchSettings,
      replaceMisfit: Boolean = true): ShardBuffer = {
    sweeper
    var replaced: Option[ShardBuffer] = None
    val buffer = buffers.compute((sourceId, key),
      (_, found) =>
        if (found != null && (!replaceMisfit || found.settings == fetch)) found
        else {
          replaced = Option(found)
          new ShardBuffer(key, stream, conn, fetch)
        })
    replaced.foreach(_.close())
    buffer
  }

  private lazy val sweeper: java.util.concurrent.ScheduledExecutorService = {
    val pool =
      java.util.concurrent.Executors.newSingleThreadScheduledExecutor(DaemonThreads.factory("kinesis-buffer-sweep"))
    pool.scheduleWithFixedDelay(() => evictIdle(), SweepMillis, SweepMillis, java.util.concurrent.TimeUnit.MILLISECONDS)
    pool
  }

  /**
   * The executor's buffers at a glance: the bytes they hold, and how many need room (they hold records, or their
   * shard is behind its tip). Counted over every buffer at most every `UsageMillis`: a round over thousands of
   * shards asks for it for each of them, and counting each time would make a round cost the square of the shards.
   */
  final case class Usage(bytes: Long, needingRoom: Int, atMillis: Long)

  val UsageMillis = 100L
  @volatile private var lastUsage = Usage(0L, 0, 0L)

  def usage: Usage = {
    val now = System.currentTimeMillis()
    val last = lastUsage
    if (now - last.atMillis < UsageMillis) last
    else {
      var bytes = 0L
      var needing = 0
      buffers.values().forEach { b => bytes += b.bytes; if (b.needsRoom) needing += 1 }
      val fresh = Usage(bytes, needing, now)
      lastUsage = fresh
      fresh
    }
  }

  /** Bytes held by every buffer of this executor (bounded by `fetchBufferSize`), as of [[usage]]. */
  def totalBytes: Long = usage.bytes

  /**
   * What one buffer may hold of the executor's `limit` (`fetchBufferSize`): an equal share among the buffers that
   * need room (they hold records, or their shard is behind its tip; `buffer` counts whatever its state), as of
   * [[usage]]. Shards caught up at their tip with nothing buffered need none. With every buffer within its share, the
   * executor's buffers stay within the limit (plus the last page each read, and what the count's tenth of a second
   * of age lets through), and no shard is starved by others' read-ahead.
   */
  def share(buffer: ShardBuffer, limit: Long): Long =
    limit / math.max(1, usage.needingRoom + (if (buffer.needsRoom) 0 else 1))

  def dropSource(sourceId: String): Unit = dropSources(Seq(sourceId))

  /** Drops the buffers of queries that stopped; their read-ahead ends at its next step. */
  def dropSources(sourceIds: Seq[String]): Unit = if (sourceIds.nonEmpty) {
    val gone = sourceIds.toSet
    buffers.entrySet().removeIf { e =>
      val drop = gone.contains(e.getKey._1); if (drop) e.getValue.close(); drop
    }
  }

  /** Whether this executor holds buffers of the query. */
  def holds(sourceId: String): Boolean = buffers.keySet().asScala.exists(_._1 == sourceId)

  /** Drops (and closes) the buffers no task has used for [[IdleMillis]]: on every sweep, and once per prefetch task. */
  def evictIdle(): Unit = {
    val now = System.currentTimeMillis()
    buffers.entrySet().removeIf { e =>
      val drop = now - e.getValue.lastUsed > IdleMillis
      if (drop) e.getValue.close()
      drop
    }
  }
}
