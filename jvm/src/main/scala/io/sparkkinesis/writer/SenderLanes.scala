package io.sparkkinesis.writer

import scala.collection.mutable
import io.sparkkinesis.compat.ScalaCompat._

/**
 * A writer's waiting records, one lane ([[PendingEntries]]) per target stream, since one PutRecords call goes to
 * one stream. Lanes are served in turn so that no stream waits behind another. Not thread-safe: used under the
 * writer's lock, which the task's thread and its `maxRecordDelay` ticks (other threads) take in turn.
 */
private[writer] final class SenderLanes(
    perKeyOrdering: Boolean,
    maxRecordsPerRequest: Int,
    maxRequestBytes: Int => Long) {
  private val lanes = mutable.ArrayBuffer.empty[PendingEntries]
  private var nextLane = 0

  /** The lane of stream number `stream`, made on first use. */
  def apply(stream: Int): PendingEntries = {
    while (lanes.size <= stream) lanes += (if (perKeyOrdering) new PerKeyEntries else new UnorderedEntries)
    lanes(stream)
  }

  def waitingBytes: Long = lanes.iterator.map(_.waitingBytes).sum

  /** When the earliest retry that is not ready yet becomes due, in any lane. */
  def nextDueNanos: Option[Long] = lanes.iterator.flatMap(_.nextDueNanos).minOption

  def promoteDue(nowNanos: Long): Unit = lanes.foreach(_.promoteDue(nowNanos))

  /**
   * The next lane, in turn, that should send a call of `size` records now. Without `force` only a full call
   * leaves (the task is still producing rows); with it, any ready record does (flushing, or the buffer is full).
   */
  def pick(size: Int, force: Boolean): Option[Int] = {
    val n = lanes.size
    (0 until n).iterator.map(k => (nextLane + k) % n).find { i =>
      val l = lanes(i)
      // A full call is ready, or (perKey, few keys) a full call's worth waits but cannot leave together.
      l.readyCount > 0 && (force || l.readyCount >= size || l.readyBytes >= maxRequestBytes(i) ||
        l.waitingCount >= maxRecordsPerRequest)
    }.map { i => nextLane = (i + 1) % math.max(n, 1); i }
  }
}
