package io.sparkkinesis.source

import java.lang.ref.WeakReference
import java.util.concurrent.ConcurrentHashMap

import io.sparkkinesis.compat.CollectionConverters._

import org.apache.spark.SparkContext
import org.apache.spark.scheduler.{SparkListener, SparkListenerExecutorAdded, SparkListenerExecutorRemoved}

import io.sparkkinesis.compat.SparkShim

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

  /** Executor id -> cores, for every executor the application has now. */
  def executors: Map[String, Int] = cores.asScala.toMap
}

private[sparkkinesis] object ExecutorSlots {
  private var current: Option[(WeakReference[SparkContext], ExecutorSlots)] = None

  /** The listener of `sc`'s executors, started on first use. */
  def of(sc: SparkContext): ExecutorSlots = synchronized {
    current.collect { case (ref, slots) if ref.get() eq sc => slots }.getOrElse {
      val slots = new ExecutorSlots
      sc.addSparkListener(slots) // first, so that no executor added meanwhile is missed
      slots.start(SparkShim.executorCores(sc))
      current = Some((new WeakReference(sc), slots))
      slots
    }
  }
}
