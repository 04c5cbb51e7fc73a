package io.sparkkinesis.sink

import scala.collection.mutable.ArrayBuffer

/** One record to put, with its size as the service counts it (partition key plus data). */
final case class PutEntry(partitionKey: String, data: Array[Byte], bytes: Long, position: Long)

/**
 * Packs records into PutRecords requests that never break the limits: at most `maxRecordsPerRequest` entries
 * and `maxRequestBytes` bytes, partition keys counted. A record over `maxRecordBytes` is rejected before it
 * gets here (see [[KinesisDataWriter]]).
 */
final class PutRecordsBatcher(limits: PutLimits) {
  private var entries = new ArrayBuffer[PutEntry]()
  private var bytes = 0L

  /** Adds an entry; returns the full batch it closed, if adding it would have broken a limit. */
  def add(entry: PutEntry): Option[Seq[PutEntry]] = {
    val closed =
      if (entries.nonEmpty && (entries.size >= limits.maxRecordsPerRequest || bytes + entry.bytes > limits.maxRequestBytes))
        Some(drain())
      else None
    entries += entry
    bytes += entry.bytes
    closed
  }

  /** The entries not yet handed out, if any. */
  def flush(): Option[Seq[PutEntry]] = if (entries.isEmpty) None else Some(drain())

  private def drain(): Seq[PutEntry] = {
    val out = entries.toSeq
    entries = new ArrayBuffer[PutEntry]()
    bytes = 0L
    out
  }
}
