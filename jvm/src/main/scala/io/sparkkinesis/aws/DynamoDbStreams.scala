package io.sparkkinesis.aws

import io.sparkkinesis.compat.CollectionConverters._

import software.amazon.awssdk.services.dynamodb.model.{
  DescribeStreamRequest,
  ListStreamsRequest,
  Shard,
  ShardFilter,
  ShardFilterType,
  StreamDescription,
  StreamStatus
}
import software.amazon.awssdk.services.dynamodb.streams.DynamoDbStreamsClient

import io.sparkkinesis.compat.ScalaCompat._
import io.sparkkinesis.errors.KinesisErrors

/**
 * The driver's calls of `format("dynamodb-streams")` besides reading: which stream a table has (ListStreams), its
 * shards (DescribeStream, paged), as the Kinesis side has StreamCheck and [[ShardListing]], and the children of an
 * ended shard (DescribeStream with the `CHILD_SHARDS` filter, which Kinesis's ListShards has no match for). Every call goes
 * through the one failure policy ([[RetryPolicy]], [[Failure]]). A stream is named by its ARN everywhere, offsets
 * included: a table's stream changes when its stream is disabled and enabled again, and the offsets of one stream
 * mean nothing in another.
 */
private[sparkkinesis] object DynamoDbStreams {

  private val ArnPattern = "arn:aws[a-z-]*:dynamodb:([a-z0-9-]+):[0-9]{12}:table/[A-Za-z0-9_.-]{3,255}/stream/.+".r

  /** The command that enables a table's stream with both images, for errors and docs. */
  def enableCommand(table: String): String =
    s"aws dynamodb update-table --table-name $table --stream-specification " +
      "StreamEnabled=true,StreamViewType=NEW_AND_OLD_IMAGES"

  /** A stream named by its ARN (option `dynamoDbStreamArn`). */
  def parseArn(text: String): StreamRef = text.trim match {
    case arn @ ArnPattern(region) => StreamRef(arn, Some(arn), Some(region))
    case other =>
      throw KinesisErrors.invalidOptionValue("dynamoDbStreamArn", other,
        "a DynamoDB stream ARN such as arn:aws:dynamodb:us-east-1:123456789012:table/orders/stream/" +
          "2026-01-31T12:00:00.000")
  }

  /**
   * The latest stream of `table` (the one with the newest label), which must be enabled; else
   * [KINESIS_DYNAMODB_STREAM_NOT_ENABLED], saying how to enable one. ListStreams answers a table that does not
   * exist as one without streams, so the error covers both.
   */
  def latestOf(connection: AwsConnection, table: String): StreamRef = {
    val client = KinesisClients.dynamoDbStreams(connection)
    val policy = RetryPolicy.Default.on(connection)
    var streams = Vector.empty[(String, String)]
    var from: Option[String] = None
    do {
      val b = ListStreamsRequest.builder().tableName(table)
      from.foreach(b.exclusiveStartStreamArn)
      val response = policy.call("ListStreams", table)(client.listStreams(b.build()))
      streams ++= response.streams().asScala.map(s => s.streamLabel() -> s.streamArn())
      from = Option(response.lastEvaluatedStreamArn()).filter(_.nonEmpty)
    } while (from.isDefined)
    val where = s"region ${connection.region}" + connection.endpointUrl.fold("")(u => s" at $u")
    val arn = streams.sortBy(_._1).lastOption.map(_._2).getOrElse(
      throw KinesisErrors.dynamoDbStreamNotEnabled(table, s"no stream of the table is listed in $where",
        s"Check 'tableName', 'region' and 'endpointUrl'; if the table exists, enable its stream: ${enableCommand(table)}"))
    val stream = parseArn(arn)
    requireEnabled(connection, stream, Some(table))
    stream
  }

  /** Fails unless `stream` is enabled (or being enabled): a disabled stream gets no more records. */
  def requireEnabled(connection: AwsConnection, stream: StreamRef, table: Option[String] = None): Unit = {
    val d = describe(KinesisClients.dynamoDbStreams(connection), stream, None, None, RetryPolicy.Default.on(connection))
    if (d.streamStatus() == StreamStatus.DISABLED || d.streamStatus() == StreamStatus.DISABLING) {
      val name = table.getOrElse(d.tableName())
      throw KinesisErrors.dynamoDbStreamNotEnabled(name,
        s"its stream ${stream.toString} is ${d.streamStatusAsString()}",
        s"Enable a new stream (${enableCommand(name)}) and read that one: give 'tableName', which reads the latest.")
    }
  }

  /** Every shard DescribeStream lists for `stream`, paged by the last shard id, once each. */
  def list(connection: AwsConnection, stream: StreamRef, policy: RetryPolicy): Seq[ShardDescription] =
    list(KinesisClients.dynamoDbStreams(connection), stream, policy)

  /** The same through `client`. */
  def list(client: DynamoDbStreamsClient, stream: StreamRef, policy: RetryPolicy): Seq[ShardDescription] =
    described(client, stream, None, policy)

  /**
   * The shards whose parent is `ended`: DescribeStream with `ShardFilter{Type=CHILD_SHARDS, ShardId=ended}`, whose
   * answer holds those children alone instead of every shard of the last 24 hours. A service that ignores the filter
   * (moto) answers with every shard, so only those whose parent is `ended` are kept.
   */
  def children(
      client: DynamoDbStreamsClient,
      stream: StreamRef,
      ended: String,
      policy: RetryPolicy): Seq[ShardDescription] =
    described(client, stream, Some(ShardFilter.builder().`type`(ShardFilterType.CHILD_SHARDS).shardId(ended).build()),
      policy).filter(_.parentShardId.contains(ended))

  /** What DescribeStream lists of `stream` under `filter`, paged by the last shard id, once each. */
  private def described(
      client: DynamoDbStreamsClient,
      stream: StreamRef,
      filter: Option[ShardFilter],
      policy: RetryPolicy): Seq[ShardDescription] = {
    val shards = Vector.newBuilder[ShardDescription]
    var from: Option[String] = None
    var pages = 0
    do {
      val d = describe(client, stream, from, filter, policy)
      d.shards().asScala.foreach(s => shards += of(s))
      from = Option(d.lastEvaluatedShardId()).filter(_.nonEmpty)
      pages += 1
    } while (from.isDefined && pages < 100000)
    shards.result().distinctBy(_.shardId)
  }

  private def describe(
      client: DynamoDbStreamsClient,
      stream: StreamRef,
      from: Option[String],
      filter: Option[ShardFilter],
      policy: RetryPolicy): StreamDescription = {
    val b = DescribeStreamRequest.builder().streamArn(stream.toString)
    from.foreach(b.exclusiveStartShardId)
    filter.foreach(b.shardFilter)
    policy.call("DescribeStream", stream.toString)(client.describeStream(b.build())).streamDescription()
  }

  /**
   * A DynamoDB shard as the engine's [[ShardDescription]]: its parent (one at most; DynamoDB does not merge) and its
   * sequence numbers. DynamoDB shards have no hash key ranges; the read path uses none (only KPL aggregates, which
   * DynamoDB does not write, are checked against a range), so the range is left empty (0 to 0).
   */
  private def of(s: Shard): ShardDescription = {
    val seqs = s.sequenceNumberRange()
    ShardDescription(s.shardId(), Option(s.parentShardId()).filter(_.nonEmpty), None, BigInt(0), BigInt(0),
      Option(seqs).flatMap(r => Option(r.startingSequenceNumber())).getOrElse("0"),
      Option(seqs).flatMap(r => Option(r.endingSequenceNumber())))
  }
}
