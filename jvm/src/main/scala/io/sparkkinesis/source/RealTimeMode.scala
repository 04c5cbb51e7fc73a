package io.sparkkinesis.source

import io.sparkkinesis.config.KinesisOptions
import io.sparkkinesis.errors.KinesisErrors

/**
 * Real-time mode (`trigger(realTime=...)`, Spark 4.1 and later). Its classes live in the `spark-4.1+` folder of the
 * Spark 4 artifact, which also serves Spark 4.0, where Spark's real-time interfaces do not exist; `StreamChoice` (in
 * each Spark line's folder) builds the real-time stream only when the running Spark has them.
 */
private[sparkkinesis] object RealTimeMode {
  private val SparkInterface = "org.apache.spark.sql.connector.read.streaming.SupportsRealTimeMode"

  /** Whether the running Spark has real-time mode. */
  lazy val available: Boolean =
    try { Class.forName(SparkInterface, false, getClass.getClassLoader); true }
    catch { case _: ClassNotFoundException | _: LinkageError => false }

  /**
   * Refuses the options a real-time batch cannot honour: it has no planned end, so no per-trigger budget applies
   * (as Spark's Kafka source refuses its rate limits in this mode).
   */
  def checkOptions(options: SourceOptions): Unit = {
    if (options.maxRecordsPerTrigger.isDefined)
      throw KinesisErrors.notInRealTimeMode(KinesisOptions.MaxRecordsPerTrigger.name,
        "a real-time batch passes each record on as it arrives, with no per-trigger budget")
    if (options.maxBytesPerTrigger.isDefined)
      throw KinesisErrors.notInRealTimeMode(KinesisOptions.MaxBytesPerTrigger.name,
        "a real-time batch passes each record on as it arrives, with no per-trigger budget")
  }
}
