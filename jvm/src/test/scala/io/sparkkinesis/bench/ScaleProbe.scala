package io.sparkkinesis.bench

import java.lang.management.ManagementFactory
import java.util.concurrent.ConcurrentLinkedQueue
import java.util.concurrent.atomic.AtomicInteger

import io.sparkkinesis.compat.CollectionConverters._

import org.apache.spark.scheduler.{SparkListener, SparkListenerJobEnd, SparkListenerJobStart, SparkListenerTaskEnd}
import org.apache.spark.sql.streaming.StreamingQueryListener

/**
 * One Spark job of a query: the micro-batch it ran under, whether it was a prefetch round, its tasks, how long it
 * took, and its tasks' time in all: deserializing them (the task binary: the RDD and its partitions) and running them.
 */
final case class JobTasks(
    batchId: Option[Long],
    prefetch: Boolean,
    tasks: Int,
    millis: Long = 0L,
    taskDeserializeMillis: Long = 0L,
    taskRunMillis: Long = 0L)

/** One micro-batch as Spark's progress reports it, with the driver's heap after a GC once it ended. */
final case class BatchProgress(batchId: Long, rows: Long, durations: Map[String, Long], heapAfterGcBytes: Long)

/**
 * What [[ScaleBench]] measures of a query, from Spark's own listeners: every job with its task count (a prefetch
 * round is a job over the connector's FetchRDD; the others are the batches'), and every batch's progress. After each
 * batch it runs a GC and reads the heap in use (the listener bus is asynchronous, so the pause falls in the next
 * batch's planning at worst; batches are few under AvailableNow).
 */
final class ScaleProbe extends SparkListener {
  // Listener events arrive on one thread (Spark's listener bus), in order.
  private val jobs = new java.util.LinkedHashMap[Int, (JobTasks, Long)]()
  private val stageJobs = new java.util.HashMap[Int, Int]()
  private val started = new AtomicInteger
  private val ended = new AtomicInteger

  override def onJobStart(e: SparkListenerJobStart): Unit = synchronized {
    val batch = Option(e.properties).flatMap(p => Option(p.getProperty("streaming.sql.batchId"))).map(_.toLong)
    val prefetch = e.stageInfos.exists(_.rddInfos.exists(_.name == "FetchRDD"))
    jobs.put(e.jobId, (JobTasks(batch, prefetch, e.stageInfos.map(_.numTasks).sum), e.time))
    e.stageIds.foreach(id => stageJobs.put(id, e.jobId))
    started.incrementAndGet()
  }

  override def onTaskEnd(e: SparkListenerTaskEnd): Unit = synchronized {
    Option(stageJobs.get(e.stageId)).flatMap(id => Option(jobs.get(id))).filter(_ => e.taskMetrics != null).foreach {
      case (j, start) =>
        jobs.put(stageJobs.get(e.stageId),
          (j.copy(taskDeserializeMillis = j.taskDeserializeMillis +
                e.taskMetrics.executorDeserializeTime, taskRunMillis = j.taskRunMillis + e.taskMetrics.executorRunTime),
            start))
    }
  }

  override def onJobEnd(e: SparkListenerJobEnd): Unit = synchronized {
    Option(jobs.get(e.jobId)).foreach { case (j, start) => jobs.put(e.jobId, (j.copy(millis = e.time - start), start)) }
    ended.incrementAndGet()
  }

  private val batches = new ConcurrentLinkedQueue[BatchProgress]()
  @volatile private var terminated = false

  val queryListener: StreamingQueryListener = new StreamingQueryListener {
    override def onQueryStarted(event: StreamingQueryListener.QueryStartedEvent): Unit = ()
    override def onQueryProgress(event: StreamingQueryListener.QueryProgressEvent): Unit = {
      val p = event.progress
      batches.add(BatchProgress(p.batchId, p.numInputRows,
          p.durationMs.asScala.map { case (k, v) => k -> v.longValue }.toMap, ScaleProbe.heapAfterGc()))
    }
    override def onQueryTerminated(event: StreamingQueryListener.QueryTerminatedEvent): Unit = terminated = true
  }

  /** Waits (at most `millis`) until every job that started has ended and the query's end was heard. */
  def settle(millis: Long): Unit = {
    val deadline = System.currentTimeMillis() + millis
    while ((started.get != ended.get || !terminated) && System.currentTimeMillis() < deadline) Thread.sleep(20)
  }

  def jobTasks: Seq[JobTasks] = synchronized(jobs.values().asScala.map(_._1).toSeq)
  def progress: Seq[BatchProgress] = batches.asScala.toSeq.sortBy(_.batchId)
}

object ScaleProbe {

  /** The heap in use after two full collections, in bytes. */
  def heapAfterGc(): Long = {
    val memory = ManagementFactory.getMemoryMXBean
    memory.gc()
    memory.gc()
    memory.getHeapMemoryUsage.getUsed
  }
}
