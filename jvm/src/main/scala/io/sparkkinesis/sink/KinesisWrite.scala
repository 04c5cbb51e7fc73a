package io.sparkkinesis.sink

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.metric.CustomMetric
import org.apache.spark.sql.connector.write.{BatchWrite, Write}
import org.apache.spark.sql.connector.write.streaming.StreamingWrite

import io.sparkkinesis.metrics.QueryMetricsRegistry
import io.sparkkinesis.writer.{SinkMetrics, SinkOptions, SinkSchema}

/** A checked write to Kinesis, as a batch job or a streaming query; declares the sink's metrics. */
private[sparkkinesis] final class KinesisWrite(
    options: SinkOptions,
    schema: SinkSchema,
    progress: StreamingSinkProgress) extends Write {

  override def description(): String =
    s"KinesisWrite(stream=${options.stream.getOrElse("(per row)")}, region=${options.connection.region}, " +
      s"ordering=${if (options.perKeyOrdering) "perKey" else "unordered"}, " +
      s"aggregation=${if (options.aggregationMaxBytes.isDefined) "kpl" else "none"})"

  override def toBatch: BatchWrite = new KinesisBatchWrite(options, schema)

  /**
   * A streaming query's write, made on the query's thread for each batch: the query's sink figures join its metrics
   * outside Spark's progress on the first (Spark's metrics system, CloudWatch with `cloudWatchMetrics=true`).
   */
  override def toStreaming: StreamingWrite = {
    val stream = options.stream.map(_.name)
    QueryMetricsRegistry.attachSink(SparkSession.active.sparkContext, progress, stream, () => progress.stats(stream),
      options.cloudWatch)
    new KinesisStreamingWrite(options, schema, progress)
  }

  override def supportedCustomMetrics(): Array[CustomMetric] = SinkMetrics.supported
}
