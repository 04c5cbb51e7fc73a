package io.sparkkinesis.writer

import scala.collection.mutable
import io.sparkkinesis.compat.ArrayDeque

/**
 * The records of one target stream that wait to be sent: new ones, and failed ones waiting for their retry
 * time. It decides which records may leave together in the next PutRecords call, which is where the
 * ordering modes differ ([[UnorderedEntries]], [[PerKeyEntries]]). Not thread-safe: used under the writer's lock
 * (the task's thread and its `maxRecordDelay` ticks take it in turn), like [[SenderLanes]].
 */
private[writer] trait PendingEntries {

  /** Adds a new record after every record already waiting. */
  def add(entry: PutEntry): Unit

  /**
   * Adds new records, in their order, ahead of every record waiting with their ordering keys (KPL records sent again
   * in place of copies that landed in the wrong shard, which must go before anything packed after them).
   */
  def addFirst(entries: Seq[PutEntry]): Unit

  /** Takes back a record that failed; it may leave again at `entry.notBeforeNanos`. */
  def retry(entry: PutEntry): Unit

  /** A record that was sent has landed (or was given up): frees its ordering key. */
  def landed(entry: PutEntry): Unit

  /** Makes the retries due at `nowNanos` ready to leave. */
  def promoteDue(nowNanos: Long): Unit

  /** How many records, and how many bytes, could leave now. */
  def readyCount: Int
  def readyBytes: Long

  /** Removes and returns the next records that may leave together: at most `maxEntries` and `maxBytes`. */
  def take(maxEntries: Int, maxBytes: Long): Seq[PutEntry]

  /** Records waiting (ready or not), and their bytes: what the writer buffers. */
  def waitingCount: Int
  def waitingBytes: Long

  /** When the earliest retry that is not ready yet becomes due. */
  def nextDueNanos: Option[Long]

  /**
   * Whether a record added now with this ordering key would wait behind another of the key (one in flight, waiting
   * for its retry, or waiting to leave). Always false where order is not kept.
   */
  def holds(orderingKey: String): Boolean
}

/** Retries waiting for their time, earliest first. */
private[writer] final class RetryTimer[T] {
  private val queue =
    mutable.PriorityQueue.empty[(Long, Long, T)](Ordering.by[(Long, Long, T), (Long, Long)](e => (-e._1, -e._2)))
  private var seq = 0L

  def schedule(dueNanos: Long, item: T): Unit = { queue.enqueue((dueNanos, seq, item)); seq += 1 }

  /** Removes and returns the items due at `nowNanos`, earliest (then first scheduled) first. */
  def due(nowNanos: Long): Seq[T] = {
    val out = Seq.newBuilder[T]
    while (queue.nonEmpty && queue.head._1 <= nowNanos) out += queue.dequeue()._3
    out.result()
  }

  def next: Option[Long] = queue.headOption.map(_._1)
  def size: Int = queue.size
}

/**
 * Default mode: records leave in arrival order, and a failed record leaves with the first call after its
 * retry time, ahead of newer records. Two records with the same key can then land in either order.
 */
private[writer] final class UnorderedEntries extends PendingEntries {
  private val ready = ArrayDeque.empty[PutEntry]
  private val timer = new RetryTimer[PutEntry]
  private var readyBytesSum = 0L
  private var waitingBytesSum = 0L

  override def add(entry: PutEntry): Unit = {
    ready.append(entry)
    readyBytesSum += entry.bytes
    waitingBytesSum += entry.bytes
  }

  override def addFirst(entries: Seq[PutEntry]): Unit =
    entries.reverseIterator.foreach { e =>
      ready.prepend(e)
      readyBytesSum += e.bytes
      waitingBytesSum += e.bytes
    }

  override def retry(entry: PutEntry): Unit = {
    timer.schedule(entry.notBeforeNanos, entry)
    waitingBytesSum += entry.bytes
  }

  override def landed(entry: PutEntry): Unit = ()

  override def promoteDue(nowNanos: Long): Unit =
    timer.due(nowNanos).reverseIterator.foreach { e => ready.prepend(e); readyBytesSum += e.bytes }

  override def readyCount: Int = ready.size
  override def readyBytes: Long = readyBytesSum

  override def take(maxEntries: Int, maxBytes: Long): Seq[PutEntry] = {
    val out = Vector.newBuilder[PutEntry]
    var n = 0
    var bytes = 0L
    while (ready.nonEmpty && n < maxEntries && (n == 0 || bytes + ready.head.bytes <= maxBytes)) {
      val e = ready.removeHead()
      out += e
      n += 1
      bytes += e.bytes
    }
    readyBytesSum -= bytes
    waitingBytesSum -= bytes
    out.result()
  }

  override def waitingCount: Int = ready.size + timer.size
  override def waitingBytes: Long = waitingBytesSum
  override def nextDueNanos: Option[Long] = timer.next
  override def holds(orderingKey: String): Boolean = false
}

/**
 * `ordering=perKey`: at most one record per ordering key is in flight or waiting for its retry; the key's
 * later records wait behind it in input order. A call carries at most one record per key, so a partial
 * failure can never let a later record of a key land before an earlier one.
 */
private[writer] final class PerKeyEntries extends PendingEntries {
  private val byKey = mutable.HashMap.empty[String, ArrayDeque[PutEntry]]
  // Keys whose head record may leave now, oldest first; a key is here at most once.
  private val readyKeys = ArrayDeque.empty[String]
  private val timer = new RetryTimer[String]
  private var readyBytesSum = 0L
  private var waitingCountSum = 0
  private var waitingBytesSum = 0L
  // Keys with a record in flight or waiting for its retry time.
  private val busy = mutable.HashSet.empty[String]

  override def add(entry: PutEntry): Unit = {
    val queue = byKey.getOrElseUpdate(entry.orderingKey, ArrayDeque.empty[PutEntry])
    // An empty queue means the key is neither in flight, nor ready, nor waiting for a retry.
    val wasIdle = queue.isEmpty && !busy.contains(entry.orderingKey)
    queue.append(entry)
    waitingCountSum += 1
    waitingBytesSum += entry.bytes
    if (wasIdle) makeReady(entry.orderingKey, front = false)
  }

  override def addFirst(entries: Seq[PutEntry]): Unit =
    entries.reverseIterator.foreach { e =>
      val key = e.orderingKey
      val queue = byKey.getOrElseUpdate(key, ArrayDeque.empty[PutEntry])
      // A key with a record in flight or waiting for its retry time goes on waiting for it; a ready key gets a new
      // first record; an idle key becomes ready.
      val isBusy = busy.contains(key)
      val isReady = !isBusy && queue.nonEmpty
      if (isReady) readyBytesSum += e.bytes - queue.head.bytes
      queue.prepend(e)
      waitingCountSum += 1
      waitingBytesSum += e.bytes
      if (!isBusy && !isReady) makeReady(key, front = true)
    }

  override def retry(entry: PutEntry): Unit = {
    byKey.getOrElseUpdate(entry.orderingKey, ArrayDeque.empty[PutEntry]).prepend(entry)
    waitingCountSum += 1
    waitingBytesSum += entry.bytes
    timer.schedule(entry.notBeforeNanos, entry.orderingKey)
  }

  override def landed(entry: PutEntry): Unit = {
    busy -= entry.orderingKey
    byKey.get(entry.orderingKey) match {
      case Some(queue) if queue.nonEmpty => makeReady(entry.orderingKey, front = false)
      case Some(_) => byKey -= entry.orderingKey
      case None =>
    }
  }

  override def promoteDue(nowNanos: Long): Unit =
    timer.due(nowNanos).reverseIterator.foreach { key => busy -= key; makeReady(key, front = true) }

  private def makeReady(key: String, front: Boolean): Unit = {
    if (front) readyKeys.prepend(key) else readyKeys.append(key)
    readyBytesSum += byKey(key).head.bytes
  }

  override def readyCount: Int = readyKeys.size
  override def readyBytes: Long = readyBytesSum

  override def take(maxEntries: Int, maxBytes: Long): Seq[PutEntry] = {
    val out = Vector.newBuilder[PutEntry]
    var n = 0
    var bytes = 0L
    while (readyKeys.nonEmpty && n < maxEntries && (n == 0 || bytes + byKey(readyKeys.head).head.bytes <= maxBytes)) {
      val key = readyKeys.removeHead()
      val e = byKey(key).removeHead()
      busy += key
      out += e
      n += 1
      bytes += e.bytes
    }
    readyBytesSum -= bytes
    waitingCountSum -= n
    waitingBytesSum -= bytes
    out.result()
  }

  override def waitingCount: Int = waitingCountSum
  override def waitingBytes: Long = waitingBytesSum
  override def nextDueNanos: Option[Long] = timer.next
  override def holds(orderingKey: String): Boolean =
    busy.contains(orderingKey) || byKey.get(orderingKey).exists(_.nonEmpty)
}
