package io.sparkkinesis.sink

import org.apache.spark.sql.connector.write.WriterCommitMessage

import io.sparkkinesis.metrics.WriteStats
import io.sparkkinesis.writer.{KinesisWriterCommitMessage, SinkCounts}

/**
 * The sink's counters for a streaming query's progress (`StreamingQueryProgress.sink.metrics`): those of the
 * latest micro-batch whose write committed, summed over its tasks. Lives on the driver, in the query's sink
 * table; [[KinesisStreamingWrite]] updates it when an epoch commits, Spark reads it when it reports progress. It also
 * keeps their running totals over the query's committed epochs, for the metrics that leave the process ([[stats]]).
 */
private[sparkkinesis] final class StreamingSinkProgress {
  @volatile private var latest = SinkCounts()
  @volatile private var total = SinkCounts()

  def committed(messages: Array[WriterCommitMessage]): Unit = synchronized {
    latest = messages.iterator.collect { case m: KinesisWriterCommitMessage => m.counts }.foldLeft(SinkCounts())(_ + _)
    total = total + latest
  }

  /** The running totals, for writes to `stream` (None: each row names its stream). */
  def stats(stream: Option[String]): WriteStats =
    WriteStats(stream, total.recordsWritten, total.bytesWritten, total.throttledRecords)

  def metrics: Map[String, String] = latest.byName.map { case (name, value) => name -> value.toString }.toMap
}
