package io.sparkkinesis.compat

import org.apache.spark.SparkEnv

/** The one place that touches Spark beyond its public DataSource V2 API. */
private[sparkkinesis] object SparkShim {

  /**
   * This executor as a preferred location: `executor_<host>_<executorId>`, the form Spark's scheduler reads as
   * executor-level locality (the same tag Spark's own caches use).
   */
  def executorLocation(): String = {
    val env = SparkEnv.get
    s"executor_${env.blockManager.blockManagerId.host}_${env.executorId}"
  }
}
