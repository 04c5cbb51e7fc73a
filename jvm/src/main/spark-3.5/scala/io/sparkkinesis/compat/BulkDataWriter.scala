package io.sparkkinesis.compat

import scala.util.control.NonFatal

import org.apache.spark.TaskContext
import org.apache.spark.internal.Logging
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.metric.CustomMetric
import org.apache.spark.sql.connector.write.DataWriter
import org.apache.spark.sql.execution.metric.SQLMetric

/**
 * A data writer that takes a task's rows at once. Spark 3.5 has no `DataWriter.writeAll`: it calls `write` for
 * each row, reads the task's metrics, then calls `commit`. A writer that still holds records when the metrics are
 * read reports them short, so after its commit it sets the final values itself ([[publishFinalMetrics]]).
 */
private[sparkkinesis] trait BulkDataWriter extends DataWriter[InternalRow] with Logging {

  /** Writes every row and returns when all have been sent (Spark 4's `writeAll`; not called on Spark 3.5). */
  protected def writeRows(rows: java.util.Iterator[InternalRow]): Unit

  /**
   * Sets the task's SQL metrics of `declared` (the write's `supportedCustomMetrics`) to [[currentMetricsValues]].
   * Spark 3.5 keeps them among the task's accumulators, typed `v2Custom_<metric class>`; they reach the driver
   * when the task ends. Reached by reflection (the accumulators are Spark-internal); should it fail, the metrics
   * stay as Spark read them before the commit.
   */
  protected def publishFinalMetrics(declared: Seq[CustomMetric]): Unit = {
    val ctx = TaskContext.get()
    if (ctx == null) return
    try {
      val values = currentMetricsValues().map(m => m.name() -> m.value()).toMap
      val byType = declared.flatMap(m => values.get(m.name()).map(v => s"v2Custom_${m.getClass.getName}" -> v)).toMap
      val metrics = ctx.taskMetrics()
      val accums = Seq("externalAccums", "_externalAccums").iterator
        .flatMap(n => scala.util.Try(metrics.getClass.getMethod(n)).toOption).toSeq.headOption
        .map(_.invoke(metrics).asInstanceOf[scala.collection.Seq[AnyRef]]).getOrElse(Nil)
      accums.foreach {
        case m: SQLMetric => byType.get(m.metricType).foreach(v => m.set(v))
        case _ =>
      }
    } catch {
      case NonFatal(e) => logDebug(s"Could not set the sink's final task metrics: $e")
    }
  }
}
