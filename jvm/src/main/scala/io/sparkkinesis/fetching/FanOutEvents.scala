package io.sparkkinesis.fetching

import io.sparkkinesis.compat.ArrayDeque
import io.sparkkinesis.compat.CollectionConverters._

import software.amazon.awssdk.services.kinesis.model.{Record, SubscribeToShardEvent}

/**
 * The events a fan-out subscription pushed that the reader has not taken yet, and what it has been handed so far:
 * the last sequence number (records at or before it, which a renewed subscription or the GetRecords fallback may
 * send again, are dropped), the shard's lag, and its end. At most `capacity` events are held; the subscription asks
 * for no more than there is room for. Not thread-safe: [[FanOutShardFetcher]] guards it with its lock.
 */
private[fetching] final class FanOutEvents(maxRecordsPerCall: Int, capacity: Int) {
  private val queue = ArrayDeque.empty[SubscribeToShardEvent]
  private var lastSequence: Option[String] = None
  private var behind: Option[Long] = None
  private var endQueued = false
  private var ended = false

  def size: Int = queue.size
  def nonEmpty: Boolean = queue.nonEmpty

  /** Whether another event fits. */
  def hasRoom: Boolean = queue.size < capacity

  /** How many more events may be asked for when `requested` are asked for already and not yet come. */
  def room(requested: Long): Long = capacity - queue.size - requested

  /** Whether the shard's last event (the one with no continuation) is queued or was read. */
  def endArrived: Boolean = endQueued

  /** Whether every record of the shard has been handed out. */
  def shardEnded: Boolean = ended

  /** The last record handed out, where a new subscription or the fallback goes on from. */
  def lastHandedOut: Option[String] = lastSequence

  /**
   * Queues an event; its continuation sequence number, or None for the shard's last event. Whether the reader should
   * be woken: the event brings records, the shard's end, or fills the queue but one place (an empty event, which the
   * service sends to idle shards too, only moves the position on and can wait for the reader's next look).
   */
  def add(event: SubscribeToShardEvent): (Option[String], Boolean) = {
    queue += event
    val continuation = Option(event.continuationSequenceNumber())
    if (continuation.isEmpty) endQueued = true
    (continuation, !event.records().isEmpty || endQueued || queue.size >= capacity - 1)
  }

  /** Up to `maxRecordsPerCall` records, in order, from the queued events. */
  def nextPage(): FetchedPage = {
    val records = Vector.newBuilder[Record]
    var taken = 0
    var lastBehind = behind
    while (taken < maxRecordsPerCall && queue.nonEmpty) {
      val event = queue.removeHead()
      val (now, later) = unseen(event.records().asScala.toSeq).splitAt(maxRecordsPerCall - taken)
      if (later.nonEmpty) queue.prepend(event.toBuilder.records(later.asJava).build())
      now.foreach { r => records += r; lastSequence = Some(r.sequenceNumber()) }
      taken += now.size
      lastBehind = Option(event.millisBehindLatest()).map(_.longValue()).orElse(lastBehind)
    }
    behind = lastBehind
    if (endQueued && queue.isEmpty) ended = true
    // Until the first event answers, the shard is not known to be caught up (AvailableNow must not stop on it).
    FetchedPage(records.result(), behind.getOrElse(FanOutShardFetcher.UnknownBehindMillis), ended)
  }

  /**
   * A page the GetRecords fallback read, as handed out: its records not handed out before. Returns the last of them,
   * where a subscription goes on from, and the page.
   */
  def polled(page: FetchedPage): (Option[String], FetchedPage) = {
    val fresh = unseen(page.records)
    fresh.lastOption.foreach(r => lastSequence = Some(r.sequenceNumber()))
    behind = Some(page.millisBehindLatest)
    if (page.shardEnded) { endQueued = true; ended = true }
    (fresh.lastOption.map(_.sequenceNumber()), FetchedPage(fresh.toVector, page.millisBehindLatest, ended))
  }

  /** The records trimmed away before being read: reading goes on from the oldest, nothing counts as seen. */
  def restartFromOldest(): Unit = lastSequence = None

  def clear(): Unit = queue.clear()

  private def unseen(records: Seq[Record]): Seq[Record] =
    records.filter(r => lastSequence.forall(s => BigInt(r.sequenceNumber()) > BigInt(s)))
}
