package io.sparkkinesis.source

import org.apache.spark.sql.SparkSession

/**
 * How many shards a Spark task takes: `shardsPerTask`, raised so that a round, a batch or a real-time batch has no
 * more tasks than Spark has task slots. A task costs the scheduler a few milliseconds whatever it reads; with one
 * task per shard a 1,000-shard stream would pay that 1,000 times a round while two cores run them two at a time.
 *
 * In real-time mode it is a matter of correctness too. A real-time task holds its slot for the whole batch, and Spark
 * hands a task that gets a slot only after the batch's end no record (it ends it at once): with more tasks than
 * slots, the shards of the tasks left over would never be read, batch after batch. A split adds a shard, so a query
 * sized to its slots would stall on a resharded stream.
 */
private[sparkkinesis] object TaskSlots {

  /**
   * Tasks Spark runs at once for the application now: its default parallelism (the executors' cores, or N of
   * local[N]) over `spark.task.cpus`. With no session, no bound.
   */
  def current: Int =
    SparkSession.getActiveSession.orElse(SparkSession.getDefaultSession).map(_.sparkContext).fold(Int.MaxValue) { sc =>
      math.max(1, sc.defaultParallelism / math.max(1, sc.getConf.getInt("spark.task.cpus", 1)))
    }

  /** `configured` shards per task, or more: as many as it takes for `shards` to fit in `slots` tasks. */
  def shardsPerTask(shards: Int, configured: Int, slots: Int): Int =
    math.max(configured, (shards + math.max(slots, 1) - 1) / math.max(slots, 1))
}
