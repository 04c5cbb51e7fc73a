package io.sparkkinesis.aws

import software.amazon.awssdk.services.kinesis.model.Shard

/** What ListShards says of one shard. `endingSequenceNumber` is set once the shard is closed. */
private[sparkkinesis] final case class ShardDescription(
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

private[sparkkinesis] object ShardDescription {
  def of(s: Shard): ShardDescription = {
    val range = s.hashKeyRange()
    val seqs = s.sequenceNumberRange()
    ShardDescription(s.shardId(), Option(s.parentShardId()), Option(s.adjacentParentShardId()),
      BigInt(range.startingHashKey()), BigInt(range.endingHashKey()), seqs.startingSequenceNumber(),
      Option(seqs.endingSequenceNumber()))
  }
}
