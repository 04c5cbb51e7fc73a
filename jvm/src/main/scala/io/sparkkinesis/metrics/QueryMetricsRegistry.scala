package io.sparkkinesis.metrics

import scala.util.control.NonFatal

import org.apache.spark.SparkContext
import org.apache.spark.internal.Logging
import org.apache.spark.scheduler.{SparkListener, SparkListenerEvent}
import org.apache.spark.sql.streaming.StreamingQueryListener

import io.sparkkinesis.compat.SparkShim

/**
 * The metrics of the streaming queries running on this driver, by run. A query's Kinesis source and sink attach
 * their figures when Spark creates them, on the query's own thread (which tells the query's id, run and name); the
 * run's gauges are then in Spark's metrics system (re-registered as a whole when a part joins), and its CloudWatch
 * publisher runs when the source or the sink asked for one (the first to ask sets it up). When the run ends, its
 * source's `stop` or, for a query with a Kinesis sink only, the query's termination event (heard by a listener on
 * the SparkContext) detaches it: its gauges leave the metrics system and its publisher stops, so nothing is left
 * behind across queries. Off a query's thread (a batch read or write) nothing is attached.
 */
private[sparkkinesis] object QueryMetricsRegistry extends Logging {

  private final class Run(val metrics: QueryMetrics, var source: Option[AnyRef] = None)

  private var runs = Map.empty[String, Run]
  private var listening: Option[SparkContext] = None

  /** Attaches a source reading `streams`; the id of the run it belongs to, None off a query's thread. */
  def attachSource(
      sc: SparkContext,
      streams: Seq[String],
      read: () => Seq[ReadStats],
      cloudWatch: Option[CloudWatchSettings]): Option[String] =
    attach(sc, cloudWatch) { q =>
      q.reads = Some((streams, read))
      true
    }

  /**
   * Attaches a sink (`owner`: the query's sink table, which Spark asks for a new write each batch: attached once).
   */
  def attachSink(
      sc: SparkContext,
      owner: AnyRef,
      stream: Option[String],
      write: () => WriteStats,
      cloudWatch: Option[CloudWatchSettings]): Option[String] =
    attach(sc, cloudWatch) { q =>
      if (q.writes.exists(_._1 eq owner)) false
      else {
        q.writes = Some((owner, stream, write))
        true
      }
    }

  private def attach(sc: SparkContext, cloudWatch: Option[CloudWatchSettings])(
      part: QueryMetrics => Boolean): Option[String] =
    try {
      SparkShim.streamingQueryId(sc).map { queryId =>
        val runId = SparkShim.streamingRunId(sc).getOrElse(queryId)
        synchronized {
          listenTo(sc)
          // An earlier run of the same query whose end was not heard of yet: it is over.
          runs.values.filter(r => r.metrics.queryId == queryId && r.metrics.runId != runId).foreach(r =>
            detachRun(r.metrics.runId))
          val run = runs.getOrElse(runId, {
              val name = SparkShim.streamingQueryName(sc, queryId).getOrElse(queryId)
              val r = new Run(new QueryMetrics(runId, queryId, name))
              runs += runId -> r
              r
            })
          val changed = part(run.metrics)
          val started =
            run.metrics.publisher.isEmpty && cloudWatch.exists(settings => startPublisher(sc, run, settings))
          if (changed || started) register(run)
          runId
        }
      }
    } catch {
      // Never a reason to stop the query, not even a class this Spark lacks.
      case e @ (NonFatal(_) | _: LinkageError) =>
        logWarning(s"The query's metrics could not be added to Spark's metrics system: $e")
        None
    }

  private def startPublisher(sc: SparkContext, run: Run, settings: CloudWatchSettings): Boolean =
    try {
      val q = run.metrics
      val p = new CloudWatchPublisher(q.name, settings, () => q.stats(), CloudWatchSender(settings))
      val interval = sc.getConf.getOption(CloudWatchPublisher.IntervalSetting).map(_.toLong).filter(_ > 0)
        .getOrElse(CloudWatchPublisher.DefaultIntervalMillis)
      p.start(interval)
      q.publisher = Some(p)
      logInfo(s"Publishing query ${q.name}'s metrics to CloudWatch namespace ${settings.namespace} every " +
        s"${interval / 1000.0} s")
      true
    } catch {
      case e @ (NonFatal(_) | _: LinkageError) =>
        logWarning(s"Cannot publish query ${run.metrics.name}'s metrics to CloudWatch: ${e.getMessage}; the query " +
          "runs without")
        false
    }

  /** Ends a run's metrics: its gauges leave the metrics system, its publisher stops. */
  def detach(runId: String): Unit = synchronized(detachRun(runId))

  private def detachRun(runId: String): Unit = runs.get(runId).foreach { run =>
    runs -= runId
    unregister(run)
    run.metrics.publisher.foreach(_.stop())
    // Spark removes every metric whose name starts with the source's: put back those of a query named longer.
    runs.values.filter(r => r.source.isDefined && r.metrics.sourceName.startsWith(run.metrics.sourceName))
      .foreach(register)
  }

  /** The runs attached now, by run id: their names (for tests and the logs). */
  def running: Map[String, String] = synchronized(runs.map { case (id, r) => id -> r.metrics.name })

  /** The figures the gauges of run `runId` read now, while it is attached (for tests). */
  def stats(runId: String): Option[QueryStats] = synchronized(runs.get(runId)).map(_.metrics.stats())

  private def register(run: Run): Unit = {
    unregister(run)
    val source = SparkShim.metricsSource(run.metrics.sourceName, SparkMetricsSource.registry(run.metrics))
    if (SparkShim.registerMetricsSource(source)) run.source = Some(source)
  }

  private def unregister(run: Run): Unit = {
    run.source.foreach(SparkShim.removeMetricsSource)
    run.source = None
  }

  /** Detaches a run when its query terminates (a query whose source did not, having none of ours). */
  private def listenTo(sc: SparkContext): Unit =
    if (!listening.exists(_ eq sc)) {
      sc.addSparkListener(new SparkListener {
        override def onOtherEvent(event: SparkListenerEvent): Unit = event match {
          case t: StreamingQueryListener.QueryTerminatedEvent => detach(t.runId.toString)
          case _ =>
        }
      })
      listening = Some(sc)
    }
}
