package io.sparkkinesis.compat

import java.lang.invoke.{MethodHandles, MethodType}
import java.lang.reflect.{InvocationHandler, Method, Proxy}

import scala.util.Try
import scala.util.control.NonFatal

import com.codahale.metrics.MetricRegistry

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
   * after (`source.ExecutorSlots`): the executors added before it are in no event it will see. Spark has no public
   * API for an executor's cores (its status tracker gives neither ids nor cores); a failure here (a Spark that no
   * longer has this store) is the caller's to report and work around.
   */
  def executorCores(sc: SparkContext): Try[Map[String, Int]] =
    Try {
      val store = classOf[SparkContext].getMethod("statusStore").invoke(sc)
      val list = store.getClass.getMethod("executorList", java.lang.Boolean.TYPE).invoke(store, java.lang.Boolean.TRUE)
      list.asInstanceOf[scala.collection.Seq[ExecutorSummary]].filter(e => e.isActive && e.id != "driver")
        .map(e => e.id -> e.totalCores).toMap
    }

  /** This JVM's block manager address (`host:port`), the driver's when called on the driver. */
  def blockManagerAddress(): String = {
    val id = SparkEnv.get.blockManager.blockManagerId
    s"${id.host}:${id.port}"
  }

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

  /**
   * The id of the streaming query whose thread calls (the local property Spark's stream execution sets on its thread
   * before it creates the query's sources and sinks), or None off such a thread.
   */
  def streamingQueryId(sc: SparkContext): Option[String] = Option(sc.getLocalProperty("sql.streaming.queryId"))

  /**
   * The id of that query's current run: the job group Spark's stream execution sets on its thread (the run id),
   * None when the group is not an id.
   */
  def streamingRunId(sc: SparkContext): Option[String] =
    Option(sc.getLocalProperty("spark.jobGroup.id")).filter(g => scala.util.Try(java.util.UUID.fromString(g)).isSuccess)

  /**
   * The name of that query, from the job description Spark's stream execution sets on its thread: the name (empty
   * when the query has none) on the first line, `id = <id>` on the second. None when the description is not of
   * that form, or the query has no name.
   */
  def streamingQueryName(sc: SparkContext, queryId: String): Option[String] =
    Option(sc.getLocalProperty("spark.job.description")).map(_.split("\n", -1)).collect {
      case lines if lines.length > 1 && lines(1).trim == s"id = $queryId" => lines(0).trim
    }.filter(_.nonEmpty)

  /**
   * A metrics source of Spark's metrics system (`org.apache.spark.metrics.source.Source`, private to Spark) named
   * `name` over `registry`: a proxy of that interface, so that no class of ours lives in Spark's packages.
   */
  def metricsSource(name: String, registry: MetricRegistry): AnyRef = {
    val iface = Class.forName("org.apache.spark.metrics.source.Source", true, classOf[SparkEnv].getClassLoader)
    val handler = new InvocationHandler {
      override def invoke(proxy: AnyRef, m: Method, args: Array[AnyRef]): AnyRef = m.getName match {
        case "sourceName" => name
        case "metricRegistry" => registry
        case "hashCode" => Integer.valueOf(System.identityHashCode(proxy))
        case "equals" => java.lang.Boolean.valueOf(proxy eq args(0))
        case "toString" => s"MetricsSource($name)"
        case other => throw new UnsupportedOperationException(other)
      }
    }
    Proxy.newProxyInstance(iface.getClassLoader, Array(iface), handler)
  }

  /**
   * Adds a source made by [[metricsSource]] to the driver's metrics system (`SparkEnv.metricsSystem`, whose sinks,
   * JMX, Prometheus servlet, CSV, ..., report what its registry holds); false when this Spark has no such call.
   */
  def registerMetricsSource(source: AnyRef): Boolean = onMetricsSystem("registerSource", source)

  /** Removes a source [[registerMetricsSource]] added, with every metric whose name starts with its own. */
  def removeMetricsSource(source: AnyRef): Boolean = onMetricsSystem("removeSource", source)

  /**
   * Calls `call(source)` on the driver's metrics system, through method handles: they resolve only the methods named,
   * where `Class.getMethod` would load the types of every method of `SparkEnv` (some of Spark 4's name classes that
   * are not on every class path).
   */
  private def onMetricsSystem(call: String, source: AnyRef): Boolean =
    try {
      val loader = classOf[SparkEnv].getClassLoader
      val system = Class.forName("org.apache.spark.metrics.MetricsSystem", false, loader)
      val sourceType = Class.forName("org.apache.spark.metrics.source.Source", false, loader)
      val lookup = MethodHandles.publicLookup()
      val metricsSystem = lookup.findVirtual(classOf[SparkEnv], "metricsSystem", MethodType.methodType(system))
        .invokeWithArguments(SparkEnv.get)
      lookup.findVirtual(system, call, MethodType.methodType(Void.TYPE, sourceType))
        .invokeWithArguments(metricsSystem, source)
      true
    } catch { case NonFatal(_) | _: LinkageError => false }
}
