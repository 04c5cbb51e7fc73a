package io.sparkkinesis.prefetch

import java.util.concurrent.ConcurrentHashMap

import scala.jdk.CollectionConverters._

import io.sparkkinesis.aws.{AwsConnection, StreamRef}
import io.sparkkinesis.fetching.FetchSettings
import io.sparkkinesis.offsets.ShardKey

/** The executor's prefetch buffers, one per (running query, shard). Buffers unused for 10 minutes are dropped. */
private[sparkkinesis] object PrefetchBuffers {
  private val IdleMillis = 10 * 60 * 1000L
  private val buffers = new ConcurrentHashMap[(String, ShardKey), ShardBuffer]()

  def get(sourceId: String, key: ShardKey): Option[ShardBuffer] = Option(buffers.get((sourceId, key)))

  def getOrCreate(
      sourceId: String,
      key: ShardKey,
      stream: StreamRef,
      conn: AwsConnection,
      fetch: FetchSettings): ShardBuffer = {
    evictIdle()
    buffers.computeIfAbsent((sourceId, key), _ => new ShardBuffer(key, stream, conn, fetch))
  }

  /** Bytes held by every buffer of this executor (bounded by `fetchBufferSize`). */
  def totalBytes: Long = buffers.values().asScala.map(_.bytes).sum

  def dropSource(sourceId: String): Unit =
    buffers.entrySet().removeIf { e =>
      val drop = e.getKey._1 == sourceId; if (drop) e.getValue.closed = true; drop
    }

  private def evictIdle(): Unit = {
    val now = System.currentTimeMillis()
    buffers.entrySet().removeIf { e =>
      val drop = now - e.getValue.lastUsed > IdleMillis
      if (drop) e.getValue.closed = true
      drop
    }
  }
}
