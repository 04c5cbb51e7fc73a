package io.sparkkinesis.source

import org.apache.spark.sql.connector.read.streaming.MicroBatchStream

import io.sparkkinesis.config.KinesisOptions
import io.sparkkinesis.errors.KinesisErrors

/**
 * Real-time mode (`trigger(realTime=...)`, Spark 4.1 and later). Its classes live in the `spark-4.1+` folder of the
 * Spark 4 artifact, which also serves Spark 4.0, where Spark's real-time interfaces do not exist: they are loaded
 * only when both they and those interfaces are there, and the plain micro-batch stream serves every other case.
 */
private[sparkkinesis] object RealTimeMode {
  private val SparkInterface = "org.apache.spark.sql.connector.read.streaming.SupportsRealTimeMode"
  private val OwnStream = "io.sparkkinesis.source.KinesisRealTimeStream"

  /** Whether this jar and the running Spark both have real-time mode. */
  lazy val available: Boolean = loads(SparkInterface) && loads(OwnStream)

  private def loads(name: String): Boolean =
    try { Class.forName(name, false, getClass.getClassLoader); true }
    catch { case _: ClassNotFoundException | _: LinkageError => false }

  /** The stream of a streaming read: one that can also run in real-time mode where that is available. */
  def stream(options: SourceOptions, checkpointLocation: String): MicroBatchStream =
    if (!available) new KinesisMicroBatchStream(options, checkpointLocation)
    else
      try
        Class.forName(OwnStream).getConstructor(classOf[SourceOptions], classOf[String])
          .newInstance(options, checkpointLocation).asInstanceOf[MicroBatchStream]
      catch {
        // What the stream's first step threw (a fan-out consumer that cannot be had), as it threw it: the query's
        // error must name it, not the reflective call.
        case e: java.lang.reflect.InvocationTargetException if e.getCause != null => throw e.getCause
      }

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
