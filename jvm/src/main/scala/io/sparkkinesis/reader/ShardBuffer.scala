package io.sparkkinesis.reader

import io.sparkkinesis.aws.{AwsConnection, StreamRef}
import io.sparkkinesis.fetching.{
  BufferedRecord,
  FetchCounts,
  FetchSettings,
  Pacing,
  ShardFetcher,
  ShardFetchers,
  ShardReading
}
import io.sparkkinesis.offsets.{RecordPosition, ShardKey, ShardPosition, StartPosition}

/**
 * Executor-side read-ahead for one shard of one running query: the user records after the query's position (its
 * [[RecordWindow]]), and the fetcher (with its live shard iterator) that continues after the last of them. Prefetch
 * tasks fill it and cut batch ends from it; batch tasks copy their ranges out of it. The buffer adds to the window
 * what needs a fetcher, a clock or other threads: pacing, read-ahead and the reports. All access is synchronized on
 * the buffer, except the GetRecords call itself. `open` builds the fetcher (tests play faults with it; by default
 * [[ShardFetchers]]).
 */
private[sparkkinesis] final class ShardBuffer(
    key: ShardKey,
    stream: StreamRef,
    connection: AwsConnection,
    fetch: FetchSettings,
    open: StartPosition => ShardFetcher = null) extends ShardSession {
  private val window = new RecordWindow
  private var fetcher: ShardFetcher = _
  private var fetcherBase: ShardPosition = _
  private var nextDue = 0L
  private var behind: Option[Long] = None
  // When the call that said `behind` returned (for the source's backlog estimate).
  private var behindAt: Option[Long] = None
  // Read without the lock by ShardSessions.share, like bytesHeld.
  @volatile private var caughtUp = false
  @volatile var lastUsed: Long = System.currentTimeMillis()

  /** Set when the registry drops the buffer (query stopped, or unused): read-ahead ends. */
  @volatile private var closedFlag = false
  def closed: Boolean = closedFlag

  /** Drops the buffer for good: read-ahead ends, and the fetcher lets go of what it holds (a subscription). */
  def close(): Unit = {
    closedFlag = true
    synchronized {
      if (fetcher != null) retire(fetcher)
      fetcher = null
      window.dropAll()
    }
  }

  // The counts of fetchers this buffer let go, so that the buffer's totals do not go back.
  private var retired = FetchCounts.Zero

  private def retire(f: ShardFetcher): Unit = {
    retired += FetchCounts.of(f)
    f.close()
  }

  /** What reading the shard cost and met over the buffer's life (see [[FetchCounts]]). */
  def counts: FetchCounts = synchronized(if (fetcher == null) retired else retired + FetchCounts.of(fetcher))

  /**
   * Set when the driver's listing shows the shard closed: from the next read on, the shard is read to its end by
   * GetRecords (a fan-out fetcher is let go; see [[ShardFetchers]]), so its end is found whatever the subscription
   * says. Records the subscription had queued past the buffer's last one are read again by GetRecords.
   */
  @volatile private var listedClosed = false
  def markClosed(): Unit = listedClosed = true

  /** How the buffer reads its shard (a task whose query reads otherwise replaces it: [[ShardSessions]]). */
  def settings: FetchSettings = fetch

  /** Whether the buffer reads its shard by enhanced fan-out (its settings carry the stream's consumer). */
  def readsByFanOut: Boolean = fetch.mode.consumerOf(stream.name).isDefined

  /** Whether a GetRecords call is in flight for this buffer (at most one is: others wait for it). */
  private var fetching = false

  /** Whether a background read-ahead loop runs for this buffer (at most one does). */
  private var readingAhead = false

  /**
   * Set when a query's opening round left the shard unread ([[Prefetcher]]): read-ahead may open its fetcher and
   * read it from where the query stands. Otherwise read-ahead only goes on with a fetcher a round opened.
   */
  private var leftUnread = false

  /** Hands the shard, not read by a round yet, to read-ahead (see [[Prefetcher]]'s opening round). */
  def leaveToReadAhead(): Unit = synchronized { leftUnread = fetcher == null }

  /** Read-ahead loops begun on this buffer over its life (tests check who starts them). */
  private var readAheadLoops = 0L

  /** The heap the records held cost; read without the lock by other buffers' tasks (see [[RecordWindow]]). */
  def bytes: Long = window.heapBytes

  /** Whether the buffer holds records or its shard is behind its tip: it takes a share of `fetchBufferSize`. */
  def needsRoom: Boolean = window.heapBytes > 0 || !caughtUp

  /**
   * Drops what `from` says is already read; starts over from `from` when the buffer does not reach it (its fetcher,
   * reading on from elsewhere, goes, and the shard counts as behind until a call says otherwise).
   */
  def align(from: ShardPosition): Unit = synchronized {
    lastUsed = System.currentTimeMillis()
    if (window.align(from)) {
      if (fetcher != null) retire(fetcher)
      fetcher = null; caughtUp = false; nextDue = 0; leftUnread = false
    }
  }

  def isDue(now: Long): Boolean = synchronized(now >= nextDue)
  def nextDueMillis: Long = synchronized(nextDue)
  def hasEnded: Boolean = synchronized(fetcher != null && fetcher.shardEnded)
  def buffered: Int = synchronized(window.size)

  /**
   * One GetRecords call after the last buffered record, of at most `limit` records. Returns whether the page was
   * full (more is waiting). The next call is due as [[Pacing]] says.
   */
  def fill(now: Long, patient: Boolean = true, limit: Int = fetch.maxRecordsPerCall): Boolean = {
    // The call itself runs without the buffer's lock: batch tasks copy their ranges meanwhile, and a call that
    // waits (pacing, or backing off from throttling) holds up no one else. At most one call is in flight: a patient
    // caller (a prefetch round) waits for the one under way, an impatient one (read-ahead) does not: it must not
    // sit behind a call that is backing off. A closed buffer reads nothing (and opens no fetcher again).
    val (reader, skipFrom, readerBase) = synchronized {
      while (fetching && patient && !closedFlag) wait()
      if (fetching || closedFlag) return false
      if (fetcher != null && !ShardFetchers.stillFits(fetcher, listedClosed)) {
        retire(fetcher)
        fetcher = null
      }
      if (fetcher == null) {
        fetcherBase = window.last
        val (start, _) = ShardPosition.resumeFrom(fetcherBase)
        fetcher =
          if (open != null) open(start)
          else ShardFetchers.open(connection, stream, key.shardId, start, fetch, closed = listedClosed)
        leftUnread = false
      }
      if (fetcher.shardEnded) return false
      fetching = true
      (fetcher, window.last, fetcherBase)
    }
    try {
      val page = reader.fetch(patient, limit)
      synchronized {
        // `align` may have started the buffer over from elsewhere during the call: the page is then not for it.
        if (!(fetcher eq reader)) return false
        val pageBytes =
          window.append(page.records.iterator.flatMap(BufferedRecord.fromKinesis(_, reader.subRecords)), skipFrom,
            readerBase)
        behind = Some(page.millisBehindLatest)
        behindAt = Some(System.currentTimeMillis())
        val full = page.records.size >= math.min(limit, fetch.maxRecordsPerCall)
        caughtUp = page.millisBehindLatest == 0 && !full
        nextDue = now + Pacing.pauseMillis(fetch, pageBytes,
          emptyAtTip = page.records.isEmpty && page.millisBehindLatest == 0, reader.pushed, realTime = false)
        full && !page.shardEnded
      }
    } finally synchronized {
        fetching = false
        notifyAll()
      }
  }

  /** Claims the read-ahead loop for the caller; false when one already runs. */
  def startReadAhead(): Boolean = synchronized {
    if (readingAhead) false else { readingAhead = true; readAheadLoops += 1; true }
  }

  /** Whether a read-ahead loop runs for this buffer now. */
  def readingAheadNow: Boolean = synchronized(readingAhead)

  /** How many read-ahead loops have begun on this buffer. */
  def readAheadStarts: Long = synchronized(readAheadLoops)

  /**
   * One background read if it is worth it, for [[ReadAhead]]: no call is under way on the buffer, the shard is
   * behind (its last page was full, or the opening round left it unread), has not ended, was used by the query within `idleMillis`, holds fewer than `maxRecords` records and less than its
   * share of `fetchBufferSize`, and the executor's buffers are under `fetchBufferSize`. Returns the time the next
   * call is due, or None when read-ahead should stop (the loop is then released). The call is impatient: a
   * throttled one fails at once instead of backing off on a read-ahead thread (see [[ReadAhead]]).
   */
  def readAheadOnce(now: Long, maxRecords: Int, idleMillis: Long): Option[Long] = {
    val worth = synchronized {
      // A call under way (a round's, perhaps backing off) reads for this shard: the loop stops rather than wait.
      val w =
        !closed && !fetching && window.hasBase &&
          (if (fetcher == null) leftUnread else !fetcher.shardEnded && !caughtUp) &&
          window.size < maxRecords && now - lastUsed < idleMillis && ShardSessions.shared.totalBytes < fetch.bufferBytes &&
          window.heapBytes < ShardSessions.shared.share(this, fetch.bufferBytes)
      if (!w) readingAhead = false
      w
    }
    if (!worth) None
    else {
      if (isDue(now)) fill(now, patient = false)
      Some(nextDueMillis)
    }
  }

  /** Releases the read-ahead loop after it failed; the next prefetch round meets the same problem itself. */
  def stopReadAhead(): Unit = synchronized { readingAhead = false }

  /**
   * The end of the next batch after `from`: as many records after the aligned base as the budget allows (see
   * [[RecordWindow.cut]]). Should the buffer have been aligned elsewhere since (another task of an older round), the
   * report plans nothing.
   */
  def cut(
      from: ShardPosition,
      maxRecords: Long,
      maxBytes: Long,
      cutoffMillis: Option[Long],
      location: String): ShardCut = synchronized {
    val ended = fetcher != null && fetcher.shardEnded
    val c = window.cut(from, maxRecords, maxBytes, cutoffMillis, shardEnded = ended)
    ShardCut(c.end, c.records, c.bytes, caughtUp && c.takesAll, ended, c.pastCutoff, nextDue,
      ShardReading(key, behind, counts, location, c.beyondRecords, c.beyondBytes, behindAt, c.held), c.first)
  }

  /** A copy of the records in (from, to], if the buffer holds all of them. */
  def slice(from: ShardPosition, to: RecordPosition): Option[IndexedSeq[BufferedRecord]] = synchronized {
    lastUsed = System.currentTimeMillis()
    window.slice(from, to)
  }
}
