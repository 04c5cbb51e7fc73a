package io.sparkkinesis.source

import scala.jdk.CollectionConverters._

import io.sparkkinesis.aws.StreamRef
import io.sparkkinesis.reader.Retrying
import software.amazon.awssdk.services.kinesis.KinesisClient
import software.amazon.awssdk.services.kinesis.model.ListShardsRequest

/**
 * Driver-side shard discovery with ListShards, paged by NextToken. Following the API's rule, only the first
 * request names the stream; later pages carry the token alone.
 */
object ShardLister {

  def list(client: KinesisClient, stream: StreamRef): Seq[ShardDescription] = {
    val shards = Seq.newBuilder[ShardDescription]
    var token: Option[String] = None
    var first = true
    while (first || token.isDefined) {
      val request = token match {
        case Some(t) => ListShardsRequest.builder().nextToken(t).maxResults(1000).build()
        case None =>
          val b = ListShardsRequest.builder().maxResults(1000)
          stream.arn.fold(b.streamName(stream.name))(b.streamARN).build()
      }
      val response = Retrying.call(s"ListShards", stream.toString)(client.listShards(request))
      response.shards().asScala.foreach { s =>
        val range = s.hashKeyRange()
        val seqs = s.sequenceNumberRange()
        shards += ShardDescription(
          s.shardId(), Option(s.parentShardId()), Option(s.adjacentParentShardId()),
          BigInt(range.startingHashKey()), BigInt(range.endingHashKey()),
          seqs.startingSequenceNumber(), Option(seqs.endingSequenceNumber()))
      }
      token = Option(response.nextToken()).filter(_.nonEmpty)
      first = false
    }
    shards.result().distinctBy(_.shardId)
  }
}
