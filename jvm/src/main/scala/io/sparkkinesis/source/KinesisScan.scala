package io.sparkkinesis.source

import org.apache.spark.sql.connector.metric.CustomMetric
import org.apache.spark.sql.connector.read.{Batch, Scan}
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream
import org.apache.spark.sql.types.StructType

import io.sparkkinesis.config.KinesisOptions
import io.sparkkinesis.errors.KinesisErrors
import io.sparkkinesis.offsets.StartPosition
import io.sparkkinesis.reader.KinesisSchema

/** The read of one query: a batch scan now, and the streaming scan of later versions. */
private[sparkkinesis] final class KinesisScan(options: SourceOptions) extends Scan {
  override def readSchema(): StructType = KinesisSchema.schema

  override def description(): String =
    s"KinesisScan(streams=${options.streams.mkString(",")}, region=${options.connection.region})"

  override def toBatch: Batch = {
    val start = options.initialPosition.getOrElse(StartPosition.TrimHorizon)
    if (start == StartPosition.Latest)
      throw KinesisErrors.invalidOptionValue(KinesisOptions.InitialPosition.name, "latest",
        "trim_horizon, earliest or at_timestamp for a batch read (a batch read from 'latest' would be empty)")
    new KinesisBatch(options, start, System.currentTimeMillis())
  }

  override def toMicroBatchStream(checkpointLocation: String): MicroBatchStream =
    RealTimeMode.stream(options, checkpointLocation)

  override def supportedCustomMetrics(): Array[CustomMetric] = Array.empty
}
