package io.sparkkinesis.prefetch

import org.apache.spark.sql.SparkSession

/** Runs one prefetch round on the executors and returns what they report. A function so tests can play it. */
private[sparkkinesis] trait PrefetchJob {
  def run(tasks: Seq[FetchTaskSpec]): Seq[ShardReport]
}

/**
 * The real round: a small Spark job ([[FetchRDD]], one task per group of shards) run from the stream execution
 * thread, so stopping the query cancels it with the query's job group.
 */
private[sparkkinesis] object SparkPrefetchJob extends PrefetchJob {
  override def run(tasks: Seq[FetchTaskSpec]): Seq[ShardReport] = {
    val sc = SparkSession.active.sparkContext
    sc.runJob(new FetchRDD(sc, tasks), (it: Iterator[ShardReport]) => it.toArray).toSeq.flatten
  }
}
