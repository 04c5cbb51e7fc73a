package io.sparkkinesis.source

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

/**
 * The tasks of a real-time batch ([[RealTimeGrouping]]): each shard back on the executor its last task ran on, and
 * never more tasks than `shardsPerTask` makes of the shards, whatever the places.
 */
class RealTimeGroupingSuite extends AnyFunSuite {

  private def shards(n: Int) = (0 until n).map(i => f"s$i%02d")

  test("shards go back to the executor their last task ran on, as many tasks there as it has slots") {
    // The batch before: two tasks of two shards on "a", one on "b".
    val where = Map("s00" -> "a", "s01" -> "b", "s02" -> "a", "s03" -> "a", "s04" -> "a", "s05" -> "b")
    val tasks = RealTimeGrouping.group(shards(6), 2, where.get, (_: String) => 2)
    assert(tasks.size == 3)
    assert(tasks.forall { case (ks, at) => at.nonEmpty && ks.forall(k => where(k) == at.get) }, tasks)
    assert(tasks.flatMap(_._1).sorted == shards(6))
  }

  test("new shards and a lost executor's shards fill what is left, and the batch keeps its number of tasks") {
    // Five shards at two per task: three tasks. "a" had s00 and s01; s02 is new; s03 and s04 were on a lost one.
    val where = Map("s00" -> "a", "s01" -> "a")
    val tasks = RealTimeGrouping.group(shards(5), 2, where.get, (_: String) => 1)
    assert(tasks.size == 3, tasks)
    assert(tasks.contains((Seq("s00", "s01"), Some("a"))), tasks)
    assert(tasks.filter(_._2.isEmpty).flatMap(_._1).sorted == Seq("s02", "s03", "s04"))
    assert(tasks.forall(_._1.size <= 2))
  }

  test("an executor gets no more tasks than its slots; the shards beyond them go where there is room") {
    // One executor held all six shards in three tasks; it now has one slot, and the batch four tasks of two.
    val tasks = RealTimeGrouping.group(shards(7), 2, (_: String) => Some("a"), (_: String) => 1)
    assert(tasks.size == 4, tasks)
    assert(tasks.count(_._2.contains("a")) == 1)
    assert(tasks.flatMap(_._1).sorted == shards(7))
  }

  test("any places: every shard once, no task over shardsPerTask, as many tasks as the shards need, deterministic") {
    val random = new Random(35)
    (1 to 500).foreach { _ =>
      val n = random.nextInt(40)
      val perTask = 1 + random.nextInt(4)
      val places = Seq("a", "b", "c")
      val where = shards(n).map(k => k -> (if (random.nextInt(4) == 0) None else Some(places(random.nextInt(3)))))
        .toMap
      val room = places.map(p => p -> random.nextInt(4)).toMap
      val tasks = RealTimeGrouping.group(shards(n), perTask, where, room)
      assert(tasks.size == (n + perTask - 1) / perTask, (n, perTask, tasks))
      assert(tasks.flatMap(_._1).sorted == shards(n))
      assert(tasks.forall(t => t._1.nonEmpty && t._1.size <= perTask))
      assert(places.forall(p => tasks.count(_._2.contains(p)) <= room(p)), (room, tasks))
      assert(tasks.forall { case (ks, at) => at.forall(p => ks.exists(k => where(k).contains(p))) })
      assert(RealTimeGrouping.group(random.shuffle(shards(n)), perTask, where, room) == tasks)
    }
  }
}
