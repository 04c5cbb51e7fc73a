package io.sparkkinesis.reader

import io.sparkkinesis.compat.ArrayDeque
import io.sparkkinesis.fetching.{BufferedRecord, HeldRecords}
import io.sparkkinesis.offsets.{RecordPosition, ShardPosition}

/**
 * The records a [[ShardBuffer]] holds for one shard: the user records after `base`, in order, and what they weigh.
 * Only the bookkeeping: no fetcher, no clock and no lock, so each way the window moves (aligned to where the query
 * stands, a page appended, a batch's end cut, a range copied out) can be checked on its own ([[RecordWindowSuite]]).
 * The buffer owns the window and calls it under its own lock; `base` and `last` are null until the first `align`.
 */
private[sparkkinesis] final class RecordWindow {
  private var from: ShardPosition = _
  private val records = ArrayDeque.empty[BufferedRecord]
  // Read without the buffer's lock by other buffers' prefetch tasks (ShardSessions.totalBytes, via ShardBuffer.bytes):
  // taking this buffer's lock from inside another buffer's would deadlock two tasks filling two shards.
  @volatile private var heap = 0L
  // Data plus partition keys of the records held: what byte budgets count (heap is what they cost).
  private var payload = 0L

  /** Where the window starts: every record it holds lies after it. */
  def base: ShardPosition = from

  /** Whether `align` has placed the window yet. */
  def hasBase: Boolean = from != null

  /** Where the window ends: after its last record, or its base when it holds none (where a fetcher resumes). */
  def last: ShardPosition = records.lastOption.map(r => ShardPosition.After(r.position)).getOrElse(from)

  def size: Int = records.size
  def isEmpty: Boolean = records.isEmpty

  /** What holding the records costs the heap (see [[BufferedRecord.heapBytes]]): what `fetchBufferSize` bounds. */
  def heapBytes: Long = heap

  /** Data plus partition keys of the records held: what `maxBytesPerTrigger` counts. */
  def payloadBytes: Long = payload

  /**
   * Moves the window to start at `from`: drops the records up to it when `from` names one held (or the window's
   * end), else starts over, empty, at `from`. Returns whether it started over: what the buffer read after its old
   * base does not lead to `from`, so the fetcher reading on from there must go.
   */
  def align(from: ShardPosition): Boolean = {
    if (this.from != null && from == this.from) return false
    from match {
      case ShardPosition.After(p) if this.from != null && records.exists(_.position == p) =>
        while (records.head.position != p) dropHead()
        dropHead()
        this.from = from
        false
      case _ if this.from != null && from == last =>
        dropAll()
        this.from = from
        false
      case _ =>
        dropAll()
        this.from = from
        true
    }
  }

  private def dropHead(): Unit = {
    val r = records.removeHead()
    heap -= r.heapBytes
    payload -= r.size
  }

  /** Lets go of every record; the base stays where it was. */
  def dropAll(): Unit = {
    records.clear()
    heap = 0
    payload = 0
  }

  /**
   * Appends a page's user records, in order, keeping only those that lie after the window's last record and after
   * each of `after` (the buffer passes where its call began and where its fetcher began: a fetcher resumed at an
   * aggregate's sequence number returns the sub-records already read again). A record the window already reaches is
   * never held twice, and the records stay in order. Returns the payload bytes appended (what pacing counts).
   */
  def append(users: Iterator[BufferedRecord], after: ShardPosition*): Long = {
    var added = 0L
    users.foreach { u =>
      if (after.forall(ShardPosition.includes(_, u.position)) && ShardPosition.includes(last, u.position)) {
        records += u
        heap += u.heapBytes
        payload += u.size
        added += u.size
      }
    }
    added
  }

  /**
   * The end of the next batch after `from`: as many records from the head as `maxRecords` and `maxBytes` allow,
   * stopping before the first that arrived after `cutoffMillis` (an AvailableNow query's start). The first record is
   * taken whatever its size: a record larger than the byte budget must still be read some time. When the window does
   * not start at `from` (aligned elsewhere since, by another task of an older round) the cut takes nothing. An
   * aligned, empty window over a shard that has ended (`shardEnded`: no record follows the last) ends the shard.
   */
  def cut(
      from: ShardPosition,
      maxRecords: Long,
      maxBytes: Long,
      cutoffMillis: Option[Long],
      shardEnded: Boolean): RecordWindow.Cut = {
    val aligned = this.from == from
    var n = 0L
    var size = 0L
    var end: ShardPosition = from
    var pastCutoff = false
    val it = if (aligned) records.iterator else Iterator.empty
    var stop = false
    while (!stop && it.hasNext) {
      val r = it.next()
      if (cutoffMillis.exists(r.arrivalMillis > _)) { pastCutoff = true; stop = true }
      else if (n >= maxRecords || (n > 0 && size + r.size > maxBytes)) stop = true
      else { n += 1; size += r.size; end = ShardPosition.After(r.position) }
    }
    if (aligned && records.isEmpty && shardEnded) end = ShardPosition.Ended
    if (!aligned) RecordWindow.Cut(aligned = false, 0, 0, end, pastCutoff = false, 0, 0, None, None)
    else RecordWindow.Cut(aligned = true, n, size, end, pastCutoff, records.size - n, payload - size,
      records.headOption.map(r => HeldRecords(records.size.toLong, payload, r.arrivalMillis)),
      if (n > 0) records.headOption.map(_.position) else None)
  }

  /** A copy of the records in (from, to], if the window holds all of them: `from` is its base or a record in it. */
  def slice(from: ShardPosition, to: RecordPosition): Option[IndexedSeq[BufferedRecord]] = {
    if (this.from == null) return None
    val startsInside = from == this.from || (from match {
      case ShardPosition.After(p) => records.exists(_.position == p)
      case _ => false
    })
    if (!startsInside || !records.exists(_.position == to)) return None
    Some(records.iterator.filter(r => ShardPosition.includes(from, r.position) && !r.position.isAfter(to)).toIndexedSeq)
  }
}

private[sparkkinesis] object RecordWindow {

  /**
   * A cut of the window (see [[RecordWindow.cut]]): whether the window started where it was asked to (`aligned`);
   * the records and payload bytes the batch takes and where it ends; whether it stopped at the cutoff; the records
   * and bytes held beyond it; what the window held (`held`, None when empty or not aligned); the first record taken.
   */
  final case class Cut(
      aligned: Boolean,
      records: Long,
      bytes: Long,
      end: ShardPosition,
      pastCutoff: Boolean,
      beyondRecords: Long,
      beyondBytes: Long,
      held: Option[HeldRecords],
      first: Option[RecordPosition]) {

    /** Whether the batch takes every record the window holds (nothing is left beyond it). */
    def takesAll: Boolean = aligned && beyondRecords == 0
  }
}
