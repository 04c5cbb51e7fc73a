package io.sparkkinesis.source

import org.apache.spark.{SparkConf, SparkContext}
import org.apache.spark.scheduler.{SparkListenerExecutorAdded, SparkListenerExecutorRemoved}
import org.apache.spark.scheduler.cluster.ExecutorInfo
import org.scalatest.funsuite.AnyFunSuite

/**
 * The task slots rounds and batches are sized to ([[TaskSlots]]): counted from the executors the application has,
 * not from `spark.default.parallelism`.
 */
class TaskSlotsSuite extends AnyFunSuite {

  test("task slots come from the executors' cores over spark.task.cpus, not from spark.default.parallelism") {
    val sc = new SparkContext(new SparkConf().setMaster("local[4]").setAppName("slots")
        .set("spark.default.parallelism", "16").set("spark.task.cpus", "2").set("spark.ui.enabled", "false")
        .set("spark.driver.host", "127.0.0.1").set("spark.driver.bindAddress", "127.0.0.1"))
    try {
      assert(sc.defaultParallelism == 16)
      assert(TaskSlots.executors(sc) == Map(TaskSlots.LocalExecutor -> 2)) // four cores, two a task
      // On a cluster, the executors' events (a listener of them, as the application has it).
      val slots = ExecutorSlots.of(sc)
      assert(ExecutorSlots.of(sc) eq slots)
      slots.onExecutorAdded(SparkListenerExecutorAdded(0L, "1", new ExecutorInfo("h1", 4, Map.empty)))
      slots.onExecutorAdded(SparkListenerExecutorAdded(0L, "2", new ExecutorInfo("h2", 2, Map.empty)))
      slots.onExecutorRemoved(SparkListenerExecutorRemoved(0L, "1", "lost"))
      assert(slots.executors == Map("2" -> 2))
    } finally sc.stop()
    assert(TaskSlots.total(Map.empty) == 1 && TaskSlots.total(Map("1" -> 2, "2" -> 4)) == 6)
  }

  test("tasks: the shards in groups of shardsPerTask, raised to fit the slots") {
    assert(TaskSlots.tasks(2, 1, 2) == 2)
    assert(TaskSlots.tasks(5, 1, 4) == 3) // 2 shards a task to fit 4 slots: 2 + 2 + 1
    assert(TaskSlots.tasks(7, 2, 8) == 4) // shardsPerTask=2: 2 + 2 + 2 + 1
    assert(TaskSlots.tasks(0, 1, 2) == 0)
  }
}
