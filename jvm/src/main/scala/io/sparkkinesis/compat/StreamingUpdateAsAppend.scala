package io.sparkkinesis.compat

/**
 * Spark's mark for a streaming sink that takes Update output mode and writes each updated row like an appended one
 * (its Kafka sink does the same). Spark keeps it in an internal package, so it is reached from here only. Real-time
 * mode runs only in Update mode.
 */
private[sparkkinesis] trait StreamingUpdateAsAppend
  extends org.apache.spark.sql.internal.connector.SupportsStreamingUpdateAsAppend
