package io.sparkkinesis.aws

import io.sparkkinesis.compat.CollectionConverters._

import software.amazon.awssdk.services.kinesis.model.{ListShardsRequest, ListShardsResponse}
import io.sparkkinesis.compat.ScalaCompat._

/**
 * ListShards, paged by NextToken, for the driver's shard discovery and the sink's shard map alike. Following the
 * API's rule, only the first request names the stream; later pages carry the token alone. Every page is one call
 * under [[RetryPolicy]], so a throttled page is tried again rather than failing the query or the task.
 */
private[sparkkinesis] object ShardListing {
  private val PageSize = 1000
  private val MaxPages = 10000

  /** Every shard of `stream` that the service lists, once each; `send` makes one call (sync or async client). */
  def list(stream: StreamRef, policy: RetryPolicy = RetryPolicy.Default)(send: ListShardsRequest => ListShardsResponse)
      : Seq[ShardDescription] = {
    val shards = Seq.newBuilder[ShardDescription]
    var token: Option[String] = None
    var pages = 0
    do {
      val request = token match {
        case Some(t) => ListShardsRequest.builder().nextToken(t).maxResults(PageSize).build()
        case None =>
          val b = ListShardsRequest.builder().maxResults(PageSize)
          stream.arn.fold(b.streamName(stream.name))(b.streamARN).build()
      }
      val response = policy.call("ListShards", stream.toString)(send(request))
      response.shards().asScala.foreach(s => shards += ShardDescription.of(s))
      token = Option(response.nextToken()).filter(_.nonEmpty)
      pages += 1
    } while (token.isDefined && pages < MaxPages)
    shards.result().distinctBy(_.shardId)
  }
}
