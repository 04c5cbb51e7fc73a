package io.sparkkinesis.offsets

/** A shard of a stream, as offsets and partitions name it. */
private[sparkkinesis] final case class ShardKey(stream: String, shardId: String) {
  override def toString: String = s"$stream/$shardId"
}
private[sparkkinesis] object ShardKey {
  implicit val ordering: Ordering[ShardKey] = Ordering.by(k => (k.stream, k.shardId))
}
