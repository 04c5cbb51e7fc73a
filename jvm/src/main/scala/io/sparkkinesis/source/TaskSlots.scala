package io.sparkkinesis.source

import org.apache.spark.SparkContext
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
 *
 * The slots are counted from the executors the application has (their cores over `spark.task.cpus`, or N of
 * `local[N]`), never from `spark.default.parallelism`: clusters often set that to two or three times the cores (EMR
 * does), which would plan more tasks than can run at once.
 */
private[sparkkinesis] object TaskSlots {

  /** The executor id of the one executor of local mode. */
  val LocalExecutor = "driver"

  private val Local = """local(?:\[(\*|\d+)(?:,\s*\d+)?\])?""".r

  /**
   * Task slots by executor id, for the application of the active session: each executor's cores over
   * `spark.task.cpus`. With no session, none.
   */
  def executors: Map[String, Int] = context.fold(Map.empty[String, Int])(executors)

  def executors(sc: SparkContext): Map[String, Int] = {
    val cpus = math.max(1, sc.getConf.getInt("spark.task.cpus", 1))
    val cores = sc.master match {
      case Local(null) => Map(LocalExecutor -> 1)
      case Local("*") => Map(LocalExecutor -> Runtime.getRuntime.availableProcessors())
      case Local(n) => Map(LocalExecutor -> n.toInt)
      case _ => ExecutorSlots.of(sc).executors
    }
    cores.map { case (id, n) => id -> n / cpus }
  }

  /** Tasks Spark can run at once for the application now (at least one). With no session, no bound. */
  def current: Int = context.fold(Int.MaxValue)(sc => total(executors(sc)))

  /**
   * Tasks of the application running now, as the task scheduler counts them (not the listener bus): the slots other
   * jobs hold while a query plans its next batch. With no session, none.
   */
  def busy: Int = context.fold(0)(_.statusTracker.getExecutorInfos.map(_.numRunningTasks).sum)

  /** The slots of `executors` (at least one: a cluster whose executors have not registered yet runs one task). */
  def total(executors: Map[String, Int]): Int = math.max(1, executors.values.sum)

  private def context: Option[SparkContext] =
    SparkSession.getActiveSession.orElse(SparkSession.getDefaultSession).map(_.sparkContext)

  /** `configured` shards per task, or more: as many as it takes for `shards` to fit in `slots` tasks. */
  def shardsPerTask(shards: Int, configured: Int, slots: Int): Int =
    math.max(configured, (shards + math.max(slots, 1) - 1) / math.max(slots, 1))

  /** The tasks `shards` make at [[shardsPerTask]] with `configured` and `slots`. */
  def tasks(shards: Int, configured: Int, slots: Int): Int = {
    val perTask = shardsPerTask(shards, configured, slots)
    (shards + perTask - 1) / perTask
  }
}
