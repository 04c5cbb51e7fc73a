package io.sparkkinesis.source

import org.apache.spark.{Partition, SparkContext, TaskContext}
import org.apache.spark.rdd.RDD

import io.sparkkinesis.compat.SparkShim
import io.sparkkinesis.reader.ShardSessions

private[source] final case class ReleasePartition(index: Int, location: String) extends Partition

/**
 * A stopped query's last job: one task per executor that held its buffers (`locations`, as prefetch reports name
 * them), each dropping that query's buffers where it runs. It returns where each task ran.
 */
private[source] final class ReleaseRDD(sc: SparkContext, sourceId: String, locations: Seq[String])
  extends RDD[String](sc, Nil) {
  override protected def getPartitions: Array[Partition] =
    locations.zipWithIndex.map { case (l, i) => ReleasePartition(i, l): Partition }.toArray

  override protected def getPreferredLocations(split: Partition): Seq[String] =
    Seq(split.asInstanceOf[ReleasePartition].location)

  override def compute(split: Partition, context: TaskContext): Iterator[String] = {
    ShardSessions.shared.retire(Seq(sourceId))
    Iterator(SparkShim.executorLocation())
  }
}
