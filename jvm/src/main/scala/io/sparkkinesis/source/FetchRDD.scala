package io.sparkkinesis.source

import org.apache.spark.{Partition, SparkContext, TaskContext}
import org.apache.spark.rdd.RDD

import io.sparkkinesis.reader.{FetchTaskSpec, Prefetcher, ShardCut}

private[source] final case class FetchPartition(index: Int, spec: FetchTaskSpec) extends Partition

/**
 * The job a prefetch round runs: one task per group of shards, placed on the executor that holds their buffers.
 * It returns reports only; the records stay in the executors' buffers for the batch tasks. Each task carries its own
 * spec in its partition; the round's specs are `@transient`, so a task does not carry every other task's shards too
 * (which made a round's cost grow with the square of the shards: at 10,000 shards each task deserialized 1.4 MiB).
 */
private[sparkkinesis] final class FetchRDD(sc: SparkContext, @transient private val specs: Seq[FetchTaskSpec])
  extends RDD[ShardCut](sc, Nil) {
  override protected def getPartitions: Array[Partition] =
    specs.zipWithIndex.map { case (s, i) => FetchPartition(i, s): Partition }.toArray

  override protected def getPreferredLocations(split: Partition): Seq[String] =
    split.asInstanceOf[FetchPartition].spec.location.toSeq

  override def compute(split: Partition, context: TaskContext): Iterator[ShardCut] =
    Prefetcher.run(split.asInstanceOf[FetchPartition].spec, readAhead = context.attemptNumber() == 0).iterator
}
