package io.sparkkinesis.aws

import scala.annotation.tailrec

import io.sparkkinesis.compat.CollectionConverters._

import software.amazon.awssdk.services.kinesis.model.{
  CreateStreamRequest,
  DeleteStreamRequest,
  DescribeStreamSummaryRequest,
  ListStreamsRequest,
  ScalingType,
  StreamMode,
  StreamModeDetails,
  UpdateShardCountRequest,
  UpdateStreamModeRequest
}

import io.sparkkinesis.errors.KinesisErrors

/**
 * The calls a Kinesis catalog makes on streams themselves, under the failure policy: list the account's streams
 * (paged), describe one, create, change and delete. Each names the stream in its errors as the user named it.
 */
private[sparkkinesis] object StreamAdmin {

  /** Streams asked for per ListStreams call (the service's most is 10,000; its default 100). */
  val PageSize = 100

  /** The longest a statement waits for a stream it created or changed to be ACTIVE. */
  val ActiveWithinSeconds = 300L

  private def policy(connection: AwsConnection) = RetryPolicy.Default.on(connection)

  /**
   * Every stream of the account and region, in the service's order (by name). Pages with NextToken, or, where the
   * endpoint only has the older form of the call, with the last name of the page before (ExclusiveStartStreamName).
   */
  def list(connection: AwsConnection, pageSize: Int = PageSize): Seq[String] = {
    val client = KinesisClients.sync(connection)
    @tailrec def pages(request: ListStreamsRequest, seen: Vector[String]): Vector[String] = {
      val page = policy(connection).call("ListStreams", "*")(client.listStreams(request))
      val names = if (!page.streamNames().isEmpty) page.streamNames().asScala.toVector
      else page.streamSummaries().asScala.map(_.streamName()).toVector
      val all = seen ++ names
      val next = ListStreamsRequest.builder().limit(pageSize)
      if (Option(page.nextToken()).exists(_.nonEmpty)) pages(next.nextToken(page.nextToken()).build(), all)
      else if (Boolean.unbox(page.hasMoreStreams) && names.nonEmpty)
        pages(next.exclusiveStartStreamName(names.last).build(), all)
      else all
    }
    pages(ListStreamsRequest.builder().limit(pageSize).build(), Vector.empty).distinct
  }

  /** The stream's facts; [KINESIS_STREAM_NOT_FOUND] when there is no such stream. */
  def describe(connection: AwsConnection, stream: StreamRef): StreamFacts = {
    val request = DescribeStreamSummaryRequest.builder()
    val summary = policy(connection).call("DescribeStreamSummary", stream.toString) {
      KinesisClients.sync(connection)
        .describeStreamSummary(stream.arn.fold(request.streamName(stream.name))(request.streamARN).build())
    }.streamDescriptionSummary()
    StreamFacts.of(summary)
  }

  /** Creates a stream of `shards` shards, or an on-demand one (None), and waits until it is ACTIVE. */
  def create(connection: AwsConnection, name: String, shards: Option[Int]): StreamFacts = {
    val request = CreateStreamRequest.builder().streamName(name)
    shards match {
      case Some(n) => request.shardCount(n)
          .streamModeDetails(StreamModeDetails.builder().streamMode(StreamMode.PROVISIONED).build())
      case None => request.streamModeDetails(StreamModeDetails.builder().streamMode(StreamMode.ON_DEMAND).build())
    }
    policy(connection).call("CreateStream", name)(KinesisClients.sync(connection).createStream(request.build()))
    awaitActive(connection, StreamRef(name, None, None))
  }

  /** Resharding to `shards` open shards of even hash-key ranges (UpdateShardCount, uniform scaling). */
  def updateShardCount(connection: AwsConnection, stream: StreamRef, shards: Int): StreamFacts = {
    val request = UpdateShardCountRequest.builder().targetShardCount(shards).scalingType(ScalingType.UNIFORM_SCALING)
    policy(connection).call("UpdateShardCount", stream.toString) {
      KinesisClients.sync(connection)
        .updateShardCount(stream.arn.fold(request.streamName(stream.name))(request.streamARN).build())
    }
    awaitActive(connection, stream)
  }

  /** Switches the stream between provisioned and on-demand capacity (UpdateStreamMode, which takes the ARN). */
  def updateMode(connection: AwsConnection, stream: StreamRef, arn: String, onDemand: Boolean): StreamFacts = {
    val mode = if (onDemand) StreamMode.ON_DEMAND else StreamMode.PROVISIONED
    val request = UpdateStreamModeRequest.builder().streamARN(arn)
      .streamModeDetails(StreamModeDetails.builder().streamMode(mode).build()).build()
    policy(connection).call("UpdateStreamMode", stream.toString)(
      KinesisClients.sync(connection).updateStreamMode(request))
    awaitActive(connection, stream)
  }

  /** Deletes the stream; the service refuses while consumers are registered on it (EnforceConsumerDeletion unset). */
  def delete(connection: AwsConnection, stream: StreamRef): Unit = {
    val request = DeleteStreamRequest.builder()
    policy(connection).call("DeleteStream", stream.toString) {
      KinesisClients.sync(connection).deleteStream(stream.arn.fold(request.streamName(stream.name))(request.streamARN)
          .build())
    }
  }

  /** The stream's facts once it is ACTIVE, asking with growing pauses; [KINESIS_STREAM_NOT_ACTIVE] after a bound. */
  def awaitActive(
      connection: AwsConnection,
      stream: StreamRef,
      withinSeconds: Long = ActiveWithinSeconds): StreamFacts = {
    val deadline = System.nanoTime() + withinSeconds * 1000000000L
    val backoff = Backoff(baseMillis = 200, capMillis = 5000)
    @tailrec def poll(attempt: Int): StreamFacts = {
      val facts = describe(connection, stream)
      if (facts.active) facts
      else if (System.nanoTime() > deadline)
        throw KinesisErrors.streamNotActive(stream.toString, facts.status, withinSeconds)
      else {
        Thread.sleep(backoff.delayMillis(attempt))
        poll(attempt + 1)
      }
    }
    poll(0)
  }
}
