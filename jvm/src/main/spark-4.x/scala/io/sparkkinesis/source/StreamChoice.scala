package io.sparkkinesis.source

import org.apache.spark.sql.connector.read.streaming.MicroBatchStream

/**
 * The stream of a streaming read on Spark 4. One jar serves Spark 4.0, which has no real-time mode, and 4.1 and
 * later, which do: on those the stream is [[KinesisRealTimeStream]] (in the `spark-4.1+` folder), since Spark says
 * whether a query runs in real-time mode only after it has the stream (`prepareForRealTimeMode`). On 4.0 that class
 * is never loaded: the JVM resolves a constructor call when it runs, and it does not run there.
 */
private[sparkkinesis] object StreamChoice {
  def open(options: SourceOptions, checkpointLocation: String): MicroBatchStream =
    if (RealTimeMode.available) new KinesisRealTimeStream(options, checkpointLocation)
    else new KinesisMicroBatchStream(options, checkpointLocation)
}
