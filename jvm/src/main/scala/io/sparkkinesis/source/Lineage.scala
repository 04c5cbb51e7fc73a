package io.sparkkinesis.source

import io.sparkkinesis.offsets.ShardKey

/** Shards related by resharding, among those of one batch. */
private[sparkkinesis] object Lineage {

  /**
   * `shards` in families: a shard with every parent and child of it that is among `shards`, and theirs in turn. Each
   * family is keyed by its first shard and lists its shards in order of shard id, which Kinesis gives in order of
   * creation: parents before children. A shard related to no other is a family of its own.
   */
  def families(shards: Seq[ShardKey], parentsOf: ShardKey => Seq[ShardKey]): Map[ShardKey, Seq[ShardKey]] = {
    val present = shards.toSet
    val root = scala.collection.mutable.Map(shards.map(k => k -> k): _*)
    def find(k: ShardKey): ShardKey = {
      val r = root(k)
      if (r == k) k else { val top = find(r); root(k) = top; top }
    }
    for (k <- shards; p <- parentsOf(k) if present.contains(p)) {
      val (a, b) = (find(k), find(p))
      if (a != b) if (Ordering[ShardKey].lt(a, b)) root(b) = a else root(a) = b
    }
    shards.groupBy(find).map { case (_, members) => members.min -> members.sorted }
  }
}
