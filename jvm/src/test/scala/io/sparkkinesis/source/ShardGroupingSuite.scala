package io.sparkkinesis.source

import org.scalatest.funsuite.AnyFunSuite

class ShardGroupingSuite extends AnyFunSuite {

  test("busy shards are spread over the tasks instead of landing together in sorted-id order") {
    // The two busy children of a split sort next to each other: grouping by id would put both in one task
    // (9,800 against 30). By load, each task gets one busy and one quiet shard.
    val load = Map("c" -> 5000L, "d" -> 4800L, "e" -> 10L, "f" -> 20L)
    val tasks = ShardGrouping.group(Seq("c", "d", "e", "f"), 2, (_: String) => None, load)
    assert(tasks.size == 2)
    assert(tasks.forall(_.size == 2))
    assert(tasks.map(_.map(load).sum).max < 5100, tasks)
    assert(tasks.flatten.sorted == Seq("c", "d", "e", "f"))
  }

  test("shards stay with the executor that holds their buffers, and no task has more than shardsPerTask shards") {
    val where = Map("s1" -> Some("exec-1"), "s2" -> Some("exec-2"), "s3" -> Some("exec-1"), "s4" -> None,
      "s5" -> Some("exec-1"))
    val tasks = ShardGrouping.group(where.keys.toSeq, 2, where, (_: String) => 1L)
    assert(tasks.forall(t => t.map(where).distinct.size == 1), tasks)
    assert(tasks.forall(_.size <= 2))
    assert(tasks.flatten.sorted == where.keys.toSeq.sorted)
    assert(tasks.size == 4) // exec-1: 3 shards in 2 tasks; exec-2: 1; unplaced: 1
  }

  test("one shard per task, and the same input always gives the same tasks") {
    val shards = (1 to 7).map(i => f"s$i%02d")
    val once = ShardGrouping.group(shards, 1, (_: String) => None, (_: String) => 0L)
    assert(once == shards.map(Seq(_)))
    val load = (k: String) => k.takeRight(1).toLong * 7 % 5
    assert(ShardGrouping.group(shards.reverse, 3, (_: String) => None, load) ==
      ShardGrouping.group(shards, 3, (_: String) => None, load))
  }

  test("a real-time batch has no more tasks than Spark has task slots: shards per task raised to fit, never lowered") {
    def tasks(shards: Int, configured: Int, slots: Int) = {
      val perTask = TaskSlots.shardsPerTask(shards, configured, slots)
      ShardGrouping.group((1 to shards).map(i => f"s$i%02d"), perTask, (_: String) => None, (_: String) => 0L)
    }
    assert(tasks(2, 1, 2).size == 2) // one per shard while the slots allow
    assert(tasks(3, 1, 2).size == 2) // a split of one of two shards: still two tasks on two slots
    assert(tasks(5, 1, 2).map(_.size).sorted == Seq(2, 3))
    assert(tasks(8, 4, 4).size == 2) // shardsPerTask=4 already fits
    assert(tasks(2000, 1, 16).size == 16)
    assert(tasks(7, 1, 1).size == 1 && tasks(7, 1, 0).size == 1) // no slot known: one task reads all
  }
  test("a batch's shards in families: a shard with its parents and children of the same batch, parents first") {
    def k(i: Int) = io.sparkkinesis.offsets.ShardKey("s", f"shardId-$i%012d")
    // 0 split into 2 and 3; 3 and 4 merged into 5; 1 alone; 6's parent is not in the batch.
    val parents = Map(k(2) -> Seq(k(0)), k(3) -> Seq(k(0)), k(5) -> Seq(k(3), k(4)), k(6) -> Seq(k(9)))
    val families = Lineage.families(Seq(k(5), k(1), k(3), k(6), k(0), k(4), k(2)), parents.getOrElse(_, Nil))
    assert(families == Map(k(0) -> Seq(k(0), k(2), k(3), k(4), k(5)), k(1) -> Seq(k(1)), k(6) -> Seq(k(6))))
  }
}
