package io.sparkkinesis.payload.registry

import java.util.UUID
import java.util.concurrent.ConcurrentHashMap

import scala.util.control.NonFatal

import org.apache.spark.internal.Logging

import io.sparkkinesis.aws.{AwsConnection, GlueRegistryClient, SchemaVersion}

/**
 * The schema versions one JVM (an executor, or the driver) has fetched, by registry connection and schema version
 * id, so that each version is fetched once per executor, never per record. At most `capacity` entries, the least
 * recently used leaving first; an entry older than `ttlNanos` is fetched again, and when that fetch fails (the
 * registry cannot be reached, or retries ran out) the entry it would have replaced is used on: a version's
 * definition never changes, so a registry outage does not stop decoding what was decoded before. Threads that ask
 * for the same version at once wait for one fetch.
 */
private[sparkkinesis] final class SchemaCache(
    fetch: (AwsConnection, UUID) => SchemaVersion,
    nanoTime: () => Long = () => System.nanoTime()) extends Logging {

  // Access order: the first entry is the least recently used.
  private val entries = new java.util.LinkedHashMap[(AwsConnection, UUID), SchemaCache.Entry](64, 0.75f, true)
  private val fetching = new ConcurrentHashMap[(AwsConnection, UUID), Object]()
  @volatile private var fetched = 0L

  /** How many times this cache called the registry (tests check it stays at one per version). */
  def fetches: Long = fetched

  /** The version `id` of `connection`'s registry, fetched when not cached or older than `ttlNanos`. */
  def apply(connection: AwsConnection, id: UUID, capacity: Int, ttlNanos: Long): SchemaVersion = {
    val key = (connection, id)
    fresh(key, ttlNanos).getOrElse {
      val lock = fetching.computeIfAbsent(key, _ => new Object)
      lock.synchronized {
        fresh(key, ttlNanos).getOrElse {
          val stale = synchronized(Option(entries.get(key)))
          val version =
            try {
              fetched += 1
              fetch(connection, id)
            } catch {
              case NonFatal(e) if stale.isDefined =>
                logWarning(s"Fetching Glue schema version $id failed (${e.getClass.getSimpleName}); using the " +
                  "definition fetched before, which a version never changes.")
                stale.get.version
            }
          put(key, SchemaCache.Entry(version, nanoTime()), capacity)
          version
        }
      }
    }
  }

  private def fresh(key: (AwsConnection, UUID), ttlNanos: Long): Option[SchemaVersion] = synchronized {
    Option(entries.get(key)).filter(e => nanoTime() - e.fetchedNanos < ttlNanos).map(_.version)
  }

  private def put(key: (AwsConnection, UUID), entry: SchemaCache.Entry, capacity: Int): Unit = synchronized {
    entries.put(key, entry)
    while (entries.size > capacity) {
      val eldest = entries.keySet().iterator()
      val gone = eldest.next()
      eldest.remove()
      fetching.remove(gone)
    }
  }
}

private[sparkkinesis] object SchemaCache {

  private final case class Entry(version: SchemaVersion, fetchedNanos: Long)

  /** The cache of this JVM: every query and task in it shares what was fetched. */
  lazy val shared: SchemaCache = new SchemaCache((c, id) => GlueRegistryClient(c).schemaVersion(id))
}
