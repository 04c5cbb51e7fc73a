package io.sparkkinesis.source

import scala.util.control.NonFatal

import org.apache.spark.internal.Logging
import org.apache.spark.sql.SparkSession

import io.sparkkinesis.compat.SparkShim
import io.sparkkinesis.reader.{FetchTaskSpec, ShardCut, ShardSessions}

/** Runs one prefetch round on the executors and returns what they report. A function so tests can play it. */
private[sparkkinesis] trait PrefetchJob {
  def run(tasks: Seq[FetchTaskSpec]): Seq[ShardCut]

  /**
   * Frees a stopped query's buffers: retires it (every later round of the application drops its buffers wherever
   * it runs) and drops its buffers in this JVM. `locations`: the executors where its rounds ran.
   */
  def release(sourceId: String, locations: Seq[String]): Unit = {
    RetiredSources.retire(sourceId)
    ShardSessions.shared.retire(Seq(sourceId))
  }
}

/**
 * The real round: a small Spark job ([[FetchRDD]], one task per group of shards) run from the stream execution
 * thread, so stopping the query cancels it with the query's job group.
 */
private[sparkkinesis] object SparkPrefetchJob extends PrefetchJob with Logging {
  override def run(tasks: Seq[FetchTaskSpec]): Seq[ShardCut] = {
    val sc = SparkSession.active.sparkContext
    val specs = tasks.map(_.copy(retired = RetiredSources.recent))
    sc.runJob(new FetchRDD(sc, specs), (it: Iterator[ShardCut]) => it.toArray).toSeq.flatten
  }

  /**
   * Besides retiring the query and dropping its buffers in this JVM, on a cluster a [[ReleaseRDD]] job drops them
   * on the executors now, from a thread and job group of its own (the query's group is being cancelled), without
   * holding up the stop. Should that job not run (the application is ending), the buffers go with their
   * executors, or at the application's next round there, or after 10 idle minutes.
   */
  override def release(sourceId: String, locations: Seq[String]): Unit = {
    super.release(sourceId, locations)
    SparkSession.getActiveSession.map(_.sparkContext).filter(sc => !sc.isLocal && !sc.isStopped).foreach { sc =>
      val elsewhere = locations.distinct.filter(_ != SparkShim.executorLocation())
      if (elsewhere.nonEmpty) {
        val thread = new Thread(() =>
          try {
            sc.setJobGroup(s"spark-kinesis-release-$sourceId", "spark-kinesis: free a stopped query's buffers",
              interruptOnCancel = false)
            val freed = sc.runJob(new ReleaseRDD(sc, sourceId, elsewhere), (it: Iterator[String]) => it.toArray)
            logInfo(s"Freed the buffers of stopped query source $sourceId on ${freed.flatten.distinct.mkString(", ")}")
          } catch {
            case NonFatal(e) => logInfo(s"Could not free the buffers of stopped query source $sourceId now: $e")
          })
        thread.setName(s"spark-kinesis-release-$sourceId")
        thread.setDaemon(true)
        thread.start()
      }
    }
  }
}
