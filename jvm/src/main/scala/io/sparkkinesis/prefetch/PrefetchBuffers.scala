package io.sparkkinesis.prefetch

import java.util.concurrent.ConcurrentHashMap

import scala.jdk.CollectionConverters._

import io.sparkkinesis.aws.{AwsConnection, KinesisClients, StreamRef}
import io.sparkkinesis.offsets.ShardKey
import io.sparkkinesis.source.FetchConfig

/** The executor's prefetch buffers, one per (running query, shard). Buffers unused for 10 minutes are dropped. */
object PrefetchBuffers {
  private val IdleMillis = 10 * 60 * 1000L
  private val buffers = new ConcurrentHashMap[(String, ShardKey), ShardBuffer]()

  def get(sourceId: String, key: ShardKey): Option[ShardBuffer] = Option(buffers.get((sourceId, key)))

  def getOrCreate(sourceId: String, key: ShardKey, stream: StreamRef, conn: AwsConnection, fetch: FetchConfig): ShardBuffer = {
    evictIdle()
    buffers.computeIfAbsent((sourceId, key), _ => new ShardBuffer(key, stream, KinesisClients.sync(conn), fetch))
  }

  /** Bytes held by every buffer of this executor (bounded by `fetchBufferSize`). */
  def totalBytes: Long = buffers.values().asScala.map(_.bytes).sum

  def dropSource(sourceId: String): Unit =
    buffers.entrySet().removeIf { e => val drop = e.getKey._1 == sourceId; if (drop) e.getValue.closed = true; drop }

  private def evictIdle(): Unit = {
    val now = System.currentTimeMillis()
    buffers.entrySet().removeIf { e =>
      val drop = now - e.getValue.lastUsed > IdleMillis
      if (drop) e.getValue.closed = true
      drop
    }
  }
}
