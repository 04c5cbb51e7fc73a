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

  test("executors whose cores Spark's status store cannot give are counted from its status tracker, with a warning") {
    val sc = new SparkContext(new SparkConf().setMaster("local[2]").setAppName("slots-fallback")
        .set("spark.ui.enabled", "false").set("spark.executor.cores", "3")
        .set("spark.driver.host", "127.0.0.1").set("spark.driver.bindAddress", "127.0.0.1"))
    try {
      val slots = ExecutorSlots.of(sc, _ => scala.util.Failure(new NoSuchMethodException("statusStore")))
      val warning = slots.startWarning.getOrElse(fail("no warning when the status store failed"))
      assert(
        warning.startsWith("[KINESIS_EXECUTOR_CORES_UNKNOWN]") && warning.contains("NoSuchMethodException") &&
          warning.contains("statusStore") && warning.contains("spark.executor.cores"), warning)
      // Local mode's status tracker lists the driver alone: no executor counted, none invented.
      assert(slots.executors.isEmpty, slots.executors)
      // Executors that register later are counted by their events, as without the failure.
      slots.onExecutorAdded(SparkListenerExecutorAdded(0L, "7", new ExecutorInfo("h7", 4, Map.empty)))
      assert(slots.executors == Map("7" -> 4))
    } finally sc.stop()
    // The listed executors but the driver, at spark.executor.cores each, else one core each (never more slots).
    assert(ExecutorSlots.fallback(Seq("d:1", "a:2", "b:3"), "d:1", Some(4)) == Map("a:2" -> 4, "b:3" -> 4))
    assert(ExecutorSlots.fallback(Seq("d:1", "a:2"), "d:1", None) == Map("a:2" -> 1))
    // The driver listed under another address (before its block manager registers): one entry fewer all the same.
    assert(ExecutorSlots.fallback(Seq("localhost:0", "a:2", "b:3"), "d:1", Some(2)).values.toSeq == Seq(2, 2))
    assert(ExecutorSlots.fallback(Seq("localhost:0"), "d:1", None).isEmpty)
    assert(TaskSlots.total(ExecutorSlots.fallback(Seq("d:1", "a:2", "b:3"), "d:1", None)) == 2)
  }

  test("tasks: the shards in groups of shardsPerTask, raised to fit the slots") {
    assert(TaskSlots.tasks(2, 1, 2) == 2)
    assert(TaskSlots.tasks(5, 1, 4) == 3) // 2 shards a task to fit 4 slots: 2 + 2 + 1
    assert(TaskSlots.tasks(7, 2, 8) == 4) // shardsPerTask=2: 2 + 2 + 2 + 1
    assert(TaskSlots.tasks(0, 1, 2) == 0)
  }
}
