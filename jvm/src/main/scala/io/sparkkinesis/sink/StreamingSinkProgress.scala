package io.sparkkinesis.sink

import org.apache.spark.sql.connector.write.WriterCommitMessage

/**
 * The sink's counters for a streaming query's progress (`StreamingQueryProgress.sink.metrics`): those of the
 * latest micro-batch whose write committed, summed over its tasks. Lives on the driver, in the query's sink
 * table; [[KinesisStreamingWrite]] updates it when an epoch commits, Spark reads it when it reports progress.
 */
private[sparkkinesis] final class StreamingSinkProgress {
  @volatile private var latest = SinkCounts()

  def committed(messages: Array[WriterCommitMessage]): Unit =
    latest = messages.iterator.collect { case m: KinesisWriterCommitMessage => m.counts }.foldLeft(SinkCounts())(_ + _)

  def metrics: Map[String, String] = latest.byName.map { case (name, value) => name -> value.toString }.toMap
}
