package io.sparkkinesis.compat

import scala.util.control.NonFatal

import org.apache.spark.{SparkContext, SparkEnv}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.status.api.v1.ExecutorSummary

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

  /** The executor id of a location [[executorLocation]] made (executor ids have no `_`). */
  def executorId(location: String): String = location.substring(location.lastIndexOf('_') + 1)

  /**
   * The executors the application has now, by id, with their cores: what Spark's status store (the UI's and the
   * REST API's source) knows of them. Read once, when a listener starts following the executors that come and go
   * after (`source.ExecutorSlots`): the executors added before it are in no event it will see. Empty if this Spark
   * has no such store.
   */
  def executorCores(sc: SparkContext): Map[String, Int] =
    try {
      val store = classOf[SparkContext].getMethod("statusStore").invoke(sc)
      val list = store.getClass.getMethod("executorList", java.lang.Boolean.TYPE).invoke(store, java.lang.Boolean.TRUE)
      list.asInstanceOf[scala.collection.Seq[ExecutorSummary]].filter(e => e.isActive && e.id != "driver")
        .map(e => e.id -> e.totalCores).toMap
    } catch { case NonFatal(_) => Map.empty }

  /**
   * The logical plan of a DataFrame (`queryExecution.logical`): a method of Spark 3.5's `Dataset` and of Spark 4's
   * classic one, which the DataFrame API of Spark 4 no longer declares.
   */
  def logicalPlan(dataFrame: AnyRef): LogicalPlan = {
    val execution = dataFrame.getClass.getMethod("queryExecution").invoke(dataFrame)
    execution.getClass.getMethod("logical").invoke(execution).asInstanceOf[LogicalPlan]
  }

  /** Whether a parsed call of a table-valued function was written `STREAM f(...)` (Spark 4.2+; false before). */
  def streamingCall(call: AnyRef): Boolean =
    try call.getClass.getMethod("isStreaming").invoke(call).asInstanceOf[Boolean]
    catch { case _: NoSuchMethodException => false }
}
