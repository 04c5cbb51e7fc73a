package io.sparkkinesis.source

import org.apache.spark.sql.connector.metric.CustomMetric
import org.apache.spark.sql.connector.read.{Batch, Scan, ScanBuilder}
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream
import org.apache.spark.sql.types.StructType

import io.sparkkinesis.config.KinesisOptions
import io.sparkkinesis.errors.KinesisErrors
import io.sparkkinesis.offsets.StartPosition

/**
 * The read of one query, from its options checked and typed: a batch, or a stream. It is its own builder, since a
 * Kinesis read has nothing to push down.
 */
private[sparkkinesis] final class KinesisScan(options: SourceOptions) extends ScanBuilder with Scan {
  override def build(): Scan = this

  override def readSchema(): StructType = options.columns.schema

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
    StreamChoice.open(options, checkpointLocation)

  override def supportedCustomMetrics(): Array[CustomMetric] = Array.empty
}
