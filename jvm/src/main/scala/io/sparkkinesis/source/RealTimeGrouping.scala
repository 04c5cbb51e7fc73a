package io.sparkkinesis.source

import scala.collection.mutable.ArrayBuffer

/**
 * Driver-side: the tasks of a real-time batch, each with its shards and the executor it should run on. A real-time
 * task holds its slot for the whole batch, so the batch has exactly as many tasks as `shardsPerTask` makes of the
 * shards (the caller raises it so that they fit in the slots, [[TaskSlots]]), never more because of where the shards
 * were read.
 *
 * A shard whose last task ran on an executor still there (`location`) goes back to that executor, where its fetcher
 * is pooled between batches (`reader.ShardSessions`): shards of one executor are dealt into tasks of up to
 * `shardsPerTask` placed there, at most as many as the executor has slots (`room`), fullest tasks first. The
 * shards left over (new ones, those of a lost executor, those beyond an executor's room) fill new tasks with no
 * place while the batch has tasks to spare, then the placed tasks with room, emptiest first. Deterministic for the
 * same input.
 */
private[sparkkinesis] object RealTimeGrouping {

  def group[K](shards: Seq[K], shardsPerTask: Int, location: K => Option[String], room: String => Int)(implicit
      ordering: Ordering[K]): Seq[(Seq[K], Option[String])] = {
    require(shardsPerTask >= 1, "shardsPerTask must be at least 1")
    val taskCount = (shards.size + shardsPerTask - 1) / shardsPerTask
    val placedChunks = shards.flatMap(k => location(k).map(_ -> k)).groupBy(_._1).toSeq.sortBy(_._1)
      .flatMap { case (at, ks) => ks.map(_._2).sorted.grouped(shardsPerTask).take(math.max(0, room(at))).map(_ -> at) }
    val tasks = ArrayBuffer(placedChunks.sortBy(c => (-c._1.size, c._2)).take(taskCount).map { case (ks, at) =>
      (ks.toVector, Option(at))
    }: _*)
    val taken = tasks.flatMap(_._1).toSet
    var rest = shards.filterNot(taken).sorted
    while (rest.nonEmpty && tasks.size < taskCount) {
      tasks += ((rest.take(shardsPerTask).toVector, None))
      rest = rest.drop(shardsPerTask)
    }
    rest.foreach { k =>
      val i = tasks.indices.filter(tasks(_)._1.size < shardsPerTask).minBy(i => (tasks(i)._1.size, i))
      tasks(i) = (tasks(i)._1 :+ k, tasks(i)._2)
    }
    tasks.toSeq.map { case (ks, at) => (ks.sorted, at) }
  }
}
