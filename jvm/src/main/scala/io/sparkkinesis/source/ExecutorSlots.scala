package io.sparkkinesis.source

import java.lang.ref.WeakReference
import java.util.concurrent.ConcurrentHashMap

import io.sparkkinesis.compat.CollectionConverters._

import scala.util.{Failure, Success, Try}

import org.apache.spark.SparkContext
import org.apache.spark.internal.Logging
import org.apache.spark.scheduler.{SparkListener, SparkListenerExecutorAdded, SparkListenerExecutorRemoved}

import io.sparkkinesis.compat.SparkShim
import io.sparkkinesis.errors.KinesisErrors

/**
 * The executors a Spark application on a cluster has, by id, with their cores: a listener of Spark's executor
 * events (`ExecutorInfo.totalCores`), started with the executors the application had when it began listening
 * ([[SparkShim.executorCores]]). One per application, started by the first query that asks ([[ExecutorSlots.of]]).
 */
private[sparkkinesis] final class ExecutorSlots private () extends SparkListener {
  private val cores = new ConcurrentHashMap[String, Int]()

  /** Executors removed since listening began: the start's snapshot may be older than their removal. */
  private val removed = ConcurrentHashMap.newKeySet[String]()

  override def onExecutorAdded(e: SparkListenerExecutorAdded): Unit = {
    removed.remove(e.executorId)
    cores.put(e.executorId, e.executorInfo.totalCores)
  }

  override def onExecutorRemoved(e: SparkListenerExecutorRemoved): Unit = {
    removed.add(e.executorId)
    cores.remove(e.executorId)
  }

  private def start(known: Map[String, Int]): Unit =
    known.foreach { case (id, n) => if (!removed.contains(id)) cores.putIfAbsent(id, n) }

  /** The warning logged when the executors' cores could not be read at the start (tests). */
  @volatile private[source] var startWarning: Option[String] = None

  /** Executor id -> cores, for every executor the application has now. */
  def executors: Map[String, Int] = cores.asScala.toMap
}

private[sparkkinesis] object ExecutorSlots extends Logging {
  private var current: Option[(WeakReference[SparkContext], ExecutorSlots)] = None

  /**
   * The listener of `sc`'s executors, started on first use with the executors `sc` has now: by `known` (Spark's status
   * store), or, should that fail, as [[fallback]] counts them from Spark's public status tracker, with a warning that
   * names the failure.
   */
  def of(sc: SparkContext, known: SparkContext => Try[Map[String, Int]] = SparkShim.executorCores): ExecutorSlots =
    synchronized {
      current.collect { case (ref, slots) if ref.get() eq sc => slots }.getOrElse {
        val slots = new ExecutorSlots
        sc.addSparkListener(slots) // first, so that no executor added meanwhile is missed
        slots.start(known(sc) match {
          case Success(executors) => executors
          case Failure(e) =>
            val configured = sc.getConf.getOption("spark.executor.cores").flatMap(c => Try(c.trim.toInt).toOption)
            val listed = fallback(sc.statusTracker.getExecutorInfos.toSeq.map(i => s"${i.host}:${i.port}"),
              SparkShim.blockManagerAddress(), configured)
            val warning = KinesisErrors.executorCoresUnknown(e, listed.size, configured.getOrElse(1),
              if (configured.isDefined) "spark.executor.cores" else "one each, spark.executor.cores being unset")
            logWarning(warning)
            slots.startWarning = Some(warning)
            listed
        })
        current = Some((new WeakReference(sc), slots))
        slots
      }
    }

  /**
   * The executors Spark's status tracker lists (`host:port` of their block managers), the driver's left out, each
   * with `spark.executor.cores` when set, else one core: never more slots than there are, so every shard still has a
   * task that gets its slot. The tracker always lists the driver too, but not always at its block manager's address
   * (`localhost:0` before that registers): when `driver` is not among them, one of them is left out all the same.
   */
  def fallback(listed: Seq[String], driver: String, coresEach: Option[Int]): Map[String, Int] = {
    val others = listed.filterNot(_ == driver)
    val executors = if (others.size < listed.size) others else listed.sorted.drop(1)
    executors.map(_ -> math.max(1, coresEach.getOrElse(1))).toMap
  }
}
