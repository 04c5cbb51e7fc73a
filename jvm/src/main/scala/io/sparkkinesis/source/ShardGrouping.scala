package io.sparkkinesis.source

import scala.collection.mutable

/**
 * Driver-side: which shards share a prefetch task. Shards whose read-ahead buffers live on the same executor stay
 * together (so a task runs where its buffers are and nothing is read twice); within one executor, shards are dealt
 * out by observed load, heaviest first, each to the lightest task that still has room for `shardsPerTask`, so one
 * task does not get all the busy shards after a split or merge while another reads only idle ones.
 *
 * `load` is what each shard delivered in its last prefetch round (bytes, 0 for a shard not read yet); the result
 * is deterministic for the same input, and comes in O(n log n) for n shards, so 10,000 shards group in milliseconds.
 */
private[sparkkinesis] object ShardGrouping {

  def group[K](shards: Seq[K], shardsPerTask: Int, location: K => Option[String], load: K => Long)(implicit
      ordering: Ordering[K]): Seq[Seq[K]] = {
    require(shardsPerTask >= 1, "shardsPerTask must be at least 1")
    shards.groupBy(location).toSeq.sortBy(_._1.getOrElse("")).flatMap { case (_, here) =>
      val tasks = Array.fill((here.size + shardsPerTask - 1) / shardsPerTask)(Vector.empty[K])
      val taskLoad = Array.fill(tasks.length)(0L)
      // The tasks with room, lightest first (ties: lowest index); a task leaves the queue when full.
      val open = mutable.PriorityQueue(tasks.indices: _*)(Ordering.by((i: Int) => (taskLoad(i), i)).reverse)
      here.sorted.sortBy(k => -load(k)).foreach { k => // stable: equal loads keep shard order
        val i = open.dequeue()
        tasks(i) = tasks(i) :+ k
        taskLoad(i) += load(k)
        if (tasks(i).size < shardsPerTask) open.enqueue(i)
      }
      tasks.toSeq.map(_.sorted)
    }
  }
}
