package io.sparkkinesis.aws

import java.util.concurrent.{Executors, ScheduledExecutorService, TimeUnit}

import scala.util.control.NonFatal

import io.sparkkinesis.runtime.DaemonThreads

/**
 * SDK clients of one kind, one per key (a connection: endpoint, region, credentials, ...), at most `capacity` of
 * them. A long-lived application that rotates temporary keys or changes settings would otherwise keep adding
 * clients, each with its sockets. When a new key passes the capacity, the client used least recently leaves the
 * cache; it is closed `closeDelayMillis` later, so that calls already under way on it finish. Whoever asks for
 * its key again gets a new client. [[retire]] lets a stopped query's client go the same way at once.
 */
private[sparkkinesis] final class ClientCache[K, C](
    capacity: Int,
    closeDelayMillis: Long,
    build: K => ClientCache.Built[C]) {
  require(capacity >= 1, "capacity must be at least 1")

  // Access order: the first entry is the least recently used.
  private val entries = new java.util.LinkedHashMap[K, ClientCache.Built[C]](16, 0.75f, true)

  /** The client for `key`, built on first use. */
  def apply(key: K): C = synchronized {
    val known = entries.get(key)
    if (known != null) known.client
    else {
      val built = build(key)
      entries.put(key, built)
      while (entries.size > capacity) {
        val eldest = entries.entrySet().iterator()
        val leaving = eldest.next().getValue
        eldest.remove()
        ClientCache.closeLater(leaving, closeDelayMillis)
      }
      built.client
    }
  }

  /** Lets the client of `key` go (closed after the delay); the next request for `key` builds a new one. */
  def retire(key: K): Unit = synchronized {
    Option(entries.remove(key)).foreach(ClientCache.closeLater(_, closeDelayMillis))
  }

  /** Clients cached now. */
  def size: Int = synchronized(entries.size)

  /** Closes every client at once (JVM shutdown). */
  def closeAll(): Unit = synchronized {
    entries.values().forEach(b => ClientCache.closeQuietly(b))
    entries.clear()
  }
}

private[sparkkinesis] object ClientCache {

  /** A client and what was built for it alone (a credentials provider, an STS client), closed with it. */
  final case class Built[C](client: C, closeables: Seq[AutoCloseable])

  private lazy val closer: ScheduledExecutorService =
    Executors.newSingleThreadScheduledExecutor(DaemonThreads.factory("kinesis-client-closer"))

  private def closeLater(built: Built[_], delayMillis: Long): Unit =
    if (delayMillis <= 0) closeQuietly(built)
    else closer.schedule(new Runnable { def run(): Unit = closeQuietly(built) }, delayMillis, TimeUnit.MILLISECONDS)

  private def closeQuietly(built: Built[_]): Unit = (built.client +: built.closeables).foreach {
    case c: AutoCloseable =>
      try c.close()
      catch { case NonFatal(_) => }
    case _ =>
  }
}
