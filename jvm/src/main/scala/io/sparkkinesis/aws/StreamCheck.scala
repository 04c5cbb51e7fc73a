package io.sparkkinesis.aws

import software.amazon.awssdk.services.kinesis.model.{ListShardsRequest, ResourceInUseException}

import io.sparkkinesis.errors.KinesisException

/**
 * Checks that streams exist when a read is defined (`load()`), so a misspelt name fails there, not at the first
 * action. One ListShards call of one shard per stream (the call reads already need, so no new permission), under
 * the failure policy: [KINESIS_STREAM_NOT_FOUND] for a missing stream, [KINESIS_ENDPOINT_UNREACHABLE] within
 * seconds for a wrong region or endpoint, [KINESIS_ACCESS_DENIED] for credentials that may not list it.
 */
private[sparkkinesis] object StreamCheck {

  def requireExisting(connection: AwsConnection, streams: Seq[StreamRef]): Unit = {
    val client = KinesisClients.sync(connection)
    val policy = RetryPolicy.Default.on(connection)
    streams.foreach { stream =>
      val request = ListShardsRequest.builder().maxResults(1)
      stream.arn.fold(request.streamName(stream.name))(request.streamARN)
      try policy.call("ListShards", stream.toString)(client.listShards(request.build()))
      catch {
        // A stream being created, updated or deleted exists; the read itself says what it finds.
        case e: KinesisException if e.getCause.isInstanceOf[ResourceInUseException] =>
      }
    }
  }
}
