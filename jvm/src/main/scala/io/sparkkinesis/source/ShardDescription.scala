package io.sparkkinesis.source

/** What the driver knows of one shard from ListShards. `endingSequenceNumber` is set once the shard is closed. */
final case class ShardDescription(
    shardId: String,
    parentShardId: Option[String],
    adjacentParentShardId: Option[String],
    startingHashKey: BigInt,
    endingHashKey: BigInt,
    startingSequenceNumber: String,
    endingSequenceNumber: Option[String]) {
  def parents: Seq[String] = parentShardId.toSeq ++ adjacentParentShardId.toSeq
  def isClosed: Boolean = endingSequenceNumber.isDefined
}
