package io.sparkkinesis.source

import org.apache.spark.sql.connector.read.streaming.MicroBatchStream

/** The stream of a streaming read on Spark 3.5, which has no real-time mode: the micro-batch stream. */
private[sparkkinesis] object StreamChoice {
  def open(options: SourceOptions, checkpointLocation: String): MicroBatchStream =
    new KinesisMicroBatchStream(options, checkpointLocation)
}
