package io.sparkkinesis.reader

import java.util.concurrent.atomic.AtomicInteger

import io.sparkkinesis.compat.SparkShim
import io.sparkkinesis.fetching.ReadMode

/**
 * Executor side of a prefetch round. For each shard of the task: align its buffer with where the query stands,
 * read more when the buffer is short of the budget and of its share of `fetchBufferSize`, and the shard is due (a full page means more is waiting, so
 * it keeps reading for up to `maxFetchTaskMillis`), then cut the next batch's end within the budget. The task's
 * shards are read side by side ([[FetchThreads]]).
 *
 * A query's opening round (`FetchTaskSpec.opening`) reads one page of at most [[OpeningPageRecords]] per shard and
 * cuts there: its batch is the one that pays Spark's one-time costs (planning and code generation in a fresh JVM,
 * about two seconds), and read-ahead goes on reading the backlog while it does, instead of after. For the same
 * reason the opening round reads only the shards it takes up within [[openingBudgetMillis]] (and the first
 * [[FetchThreads.Size]] of the task, whatever the time): with hundreds of shards, a first page of each took
 * seconds before the first batch could start. The others are cut where the query stands, not caught up, so the
 * next round takes them (an AvailableNow run does not end without them, and they are not quiet), and read-ahead
 * reads them while the first batch runs.
 */
private[sparkkinesis] object Prefetcher {
  private val MaxFetchTaskMillis = 1000L

  /** The page size of a query's opening round. */
  val OpeningPageRecords = 1000

  /** How long the opening round takes up shards after the task's first [[FetchThreads.Size]] (tests set it). */
  @volatile private[sparkkinesis] var openingBudgetMillis = 500L

  /**
   * `readAhead`: whether the task may start background reading. Only a task's first attempt does: a retried or
   * speculative attempt (perhaps on another executor) reads what its round needs and no more, so a shard is never
   * read ahead twice.
   */
  def run(spec: FetchTaskSpec, readAhead: Boolean = true): Seq[ShardCut] = {
    val sessions = ShardSessions.shared
    sessions.retire(spec.retired)
    sessions.evictIdle()
    val location = SparkShim.executorLocation()
    val started = System.currentTimeMillis()
    val takenUp = new AtomicInteger()
    // The task's shards side by side: each one's calls wait on the network, not on the CPU.
    FetchThreads.map(spec.shards) { req =>
      // A retried or speculative attempt (readAhead false) that finds no buffer here reads by GetRecords: a second
      // fan-out subscription to the shard would take it from the first attempt's executor. A later first attempt
      // here replaces that buffer with one that reads the query's way.
      val fetch = if (readAhead) spec.fetch else spec.fetch.copy(mode = ReadMode.Polling)
      val buffer = sessions.buffer(spec.sourceId, req.key, fetch, replaceMisfit = readAhead)(
        new ShardBuffer(req.key, req.stream, spec.connection, fetch))
      // No lock across the round: a fill releases the buffer between its calls (see ShardBuffer.fill), and the
      // cut says nothing beyond `req.from` should another task have moved the buffer meanwhile.
      buffer.align(req.from)
      if (req.closed) buffer.markClosed()
      val leftUnread = spec.opening && takenUp.incrementAndGet() > FetchThreads.Size &&
        System.currentTimeMillis() - started > openingBudgetMillis
      if (leftUnread) buffer.leaveToReadAhead()
      var more = !leftUnread
      while (more && buffer.buffered < req.maxRecords && !buffer.hasEnded &&
        buffer.bytes < sessions.share(buffer, spec.fetch.bufferBytes)) {
        val now = System.currentTimeMillis()
        if (!buffer.isDue(now)) more = false
        else if (spec.opening) { buffer.fill(now, limit = OpeningPageRecords); more = false }
        else more = buffer.fill(now)
        if (more && System.currentTimeMillis() - started > MaxFetchTaskMillis) more = false
        if (more) {
          // Wait for the shard's next allowed call (minFetchPeriod) before reading on.
          val wait = buffer.nextDueMillis - System.currentTimeMillis()
          if (wait > 0) Thread.sleep(wait)
        }
      }
      val report = buffer.cut(req.from, req.maxRecords, req.maxBytes, spec.cutoffMillis, location)
      if (readAhead) ReadAhead.start(buffer, spec.fetch.maxRecordsPerCall)
      report
    }
  }
}
