package io.sparkkinesis.reader

import io.sparkkinesis.aws.ShardDescription
import io.sparkkinesis.offsets.ShardKey

/**
 * Which children of a shard that ended during a real-time task the task goes on into, after every record of the
 * shard (so per-key order holds): each child whose every parent this task read to its end, or that ended before the
 * batch began, and that the task does not read already. Any other child (a merged shard whose other parent another
 * task reads) is left to the next batch's plan.
 */
private[reader] object ChildShards {

  /**
   * The children of `ended` in `listed` (its stream's shards, or its children alone) the task adopts, each with whether the listing shows
   * it closed. `endedParents`: shards this task read to their end, and those that ended before the batch; `reading`:
   * the shards the task reads already.
   */
  def adoptable(
      ended: ShardKey,
      listed: Seq[ShardDescription],
      endedParents: Set[ShardKey],
      reading: Set[ShardKey]): Seq[(ShardKey, Boolean)] =
    listed.filter(_.parents.contains(ended.shardId)).flatMap { d =>
      val child = ShardKey(ended.stream, d.shardId)
      if (!reading.contains(child) && d.parents.forall(id => endedParents.contains(ShardKey(ended.stream, id))))
        Some(child -> d.isClosed)
      else None
    }
}
