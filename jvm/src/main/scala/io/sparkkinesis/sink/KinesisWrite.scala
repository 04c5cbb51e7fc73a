package io.sparkkinesis.sink

import org.apache.spark.sql.connector.metric.CustomMetric
import org.apache.spark.sql.connector.write.{BatchWrite, Write}
import org.apache.spark.sql.connector.write.streaming.StreamingWrite

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

  override def toStreaming: StreamingWrite = new KinesisStreamingWrite(options, schema, progress)

  override def supportedCustomMetrics(): Array[CustomMetric] = SinkMetrics.supported
}
