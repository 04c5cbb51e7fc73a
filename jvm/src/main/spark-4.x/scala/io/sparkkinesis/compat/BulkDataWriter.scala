package io.sparkkinesis.compat

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.metric.CustomMetric
import org.apache.spark.sql.connector.write.DataWriter

/**
 * A data writer that takes a task's rows at once. Spark 4 hands them to `writeAll` and reads the task's metrics
 * right after, before `commit`: a writer that sends everything in `writeAll` reports complete metrics.
 */
private[sparkkinesis] trait BulkDataWriter extends DataWriter[InternalRow] {

  /** Writes every row and returns when all have been sent. */
  protected def writeRows(rows: java.util.Iterator[InternalRow]): Unit

  override def writeAll(rows: java.util.Iterator[InternalRow]): Unit = writeRows(rows)

  /** Nothing to do on Spark 4: the metrics Spark read after `writeAll` are final (see the Spark 3.5 version). */
  protected def publishFinalMetrics(declared: Seq[CustomMetric]): Unit = ()
}
