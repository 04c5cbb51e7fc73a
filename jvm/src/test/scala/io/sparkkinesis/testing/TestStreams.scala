package io.sparkkinesis.testing

import java.nio.charset.StandardCharsets
import java.time.Duration

import io.sparkkinesis.compat.CollectionConverters._

import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.services.kinesis.KinesisClient
import software.amazon.awssdk.services.kinesis.model._

import io.sparkkinesis.aws.{AwsConnection, CredentialsConfig, KinesisClients}
import io.sparkkinesis.compat.ScalaCompat._

/** A record as read back from a stream. */
final case class ReadRecord(
    shardId: String,
    partitionKey: String,
    data: Array[Byte],
    sequenceNumber: String,
    arrivalMillis: Long = 0L) {
  def text: String = new String(data, StandardCharsets.UTF_8)
}

/**
 * Streams on a local server, for every suite: the connector's options for a server, fresh streams, records put
 * with the SDK, and everything a stream holds read back with the SDK (not with the code under test).
 */
object TestStreams {
  val Region = "us-east-1"

  def connection(server: LocalKinesisServer): AwsConnection =
    AwsConnection(Region, Some(server.endpoint),
      CredentialsConfig.StaticKeys("local-test-key", "local-test-secret", None), server.cborEnabled)

  def syncClient(server: LocalKinesisServer): KinesisClient = KinesisClients.sync(connection(server))

  /** The connector's options that point it at `server`. */
  def connectionOptions(server: LocalKinesisServer): Map[String, String] = Map(
    "endpointUrl" -> server.endpoint, "region" -> Region,
    "awsAccessKeyId" -> "local-test-key", "awsSecretKey" -> "local-test-secret",
    "cborEnabled" -> server.cborEnabled.toString)

  /** ... and at `stream` on it. */
  def options(server: LocalKinesisServer, stream: String): Map[String, String] =
    connectionOptions(server) + ("streamName" -> stream)

  /** Creates `name` with `shards` shards and waits until it is ACTIVE. */
  def createStream(server: LocalKinesisServer, name: String, shards: Int): Unit = {
    syncClient(server).createStream(CreateStreamRequest.builder().streamName(name).shardCount(shards).build())
    awaitActive(server, name)
  }

  /** A new stream whose name no other test uses. */
  def freshStream(server: LocalKinesisServer, prefix: String, shards: Int): String = {
    val name = s"$prefix-${System.nanoTime()}"
    createStream(server, name, shards)
    name
  }

  /** Puts (partition key, data) records in batches of at most 500, failing on any entry the server refused. */
  def put(server: LocalKinesisServer, stream: String, records: Seq[(String, String)]): Unit = {
    val client = syncClient(server)
    records.grouped(500).foreach { batch =>
      val entries = batch.map { case (key, data) =>
        PutRecordsRequestEntry.builder().partitionKey(key).data(SdkBytes.fromUtf8String(data)).build()
      }
      val response = client.putRecords(PutRecordsRequest.builder().streamName(stream).records(entries.asJava).build())
      assert(response.failedRecordCount() == 0, s"${response.failedRecordCount()} records were refused")
    }
  }

  /** Every record of every shard from TRIM_HORIZON until caught up, shard by shard in sequence order. */
  def readAll(
      server: LocalKinesisServer,
      stream: String,
      timeout: Duration = Duration.ofSeconds(120)): Seq[ReadRecord] = {
    val client = syncClient(server)
    val deadline = System.nanoTime() + timeout.toNanos
    val shards = client.listShards(ListShardsRequest.builder().streamName(stream).build()).shards().asScala
    shards.sortBy(_.shardId()).flatMap { shard =>
      var iterator = client.getShardIterator(GetShardIteratorRequest.builder().streamName(stream)
          .shardId(shard.shardId()).shardIteratorType(ShardIteratorType.TRIM_HORIZON).build()).shardIterator()
      val out = Seq.newBuilder[ReadRecord]
      var done = false
      while (!done && iterator != null) {
        assert(System.nanoTime() < deadline, s"reading $stream did not catch up in time")
        val r = client.getRecords(GetRecordsRequest.builder().shardIterator(iterator).limit(10000).build())
        r.records().asScala.foreach(x =>
          out += ReadRecord(shard.shardId(), x.partitionKey(), x.data().asByteArray(), x.sequenceNumber(),
            x.approximateArrivalTimestamp().toEpochMilli))
        iterator = r.nextShardIterator()
        done = r.records().isEmpty && Option(r.millisBehindLatest()).forall(_ == 0L)
      }
      out.result()
    }.toSeq
  }

  /** The stream's shards as ListShards gives them (every page), sorted by id. */
  def shards(server: LocalKinesisServer, stream: String): Seq[Shard] = {
    val client = syncClient(server)
    val out = Seq.newBuilder[Shard]
    var response = client.listShards(ListShardsRequest.builder().streamName(stream).build())
    out ++= response.shards().asScala
    while (response.nextToken() != null) {
      response = client.listShards(ListShardsRequest.builder().nextToken(response.nextToken()).build())
      out ++= response.shards().asScala
    }
    out.result().sortBy(_.shardId())
  }

  /** Splits `shardId` at the middle of its hash key range and waits until the stream is ACTIVE again. */
  def split(server: LocalKinesisServer, stream: String, shardId: String): Unit = {
    val shard = shards(server, stream).find(_.shardId() == shardId).getOrElse(sys.error(s"no shard $shardId"))
    val range = shard.hashKeyRange()
    val middle = (BigInt(range.startingHashKey()) + BigInt(range.endingHashKey())) / 2
    syncClient(server).splitShard(SplitShardRequest.builder().streamName(stream).shardToSplit(shardId)
        .newStartingHashKey(middle.toString).build())
    awaitActive(server, stream)
  }

  /** Merges two adjacent shards and waits until the stream is ACTIVE again. */
  def merge(server: LocalKinesisServer, stream: String, shardId: String, adjacentShardId: String): Unit = {
    syncClient(server).mergeShards(MergeShardsRequest.builder().streamName(stream).shardToMerge(shardId)
        .adjacentShardToMerge(adjacentShardId).build())
    awaitActive(server, stream)
  }

  /** Waits until `stream` is ACTIVE (after a create or a reshard). */
  def awaitActive(server: LocalKinesisServer, stream: String): Unit = {
    val client = syncClient(server)
    val deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos
    while (client.describeStreamSummary(DescribeStreamSummaryRequest.builder().streamName(stream).build())
        .streamDescriptionSummary().streamStatus() != StreamStatus.ACTIVE) {
      assert(System.nanoTime() < deadline, s"stream $stream did not become ACTIVE again")
      Thread.sleep(50)
    }
  }

  /**
   * Waits until this machine's clock has passed every record's arrival time. kinesalite stamps the records of a
   * shard made by a reshard up to a second ahead of the clock, and `Trigger.AvailableNow` leaves records stamped
   * after its start to the next run: a test that means "the records were there before the query" awaits this.
   */
  def awaitClockPastArrivals(server: LocalKinesisServer, stream: String): Unit = {
    val latest = readAll(server, stream).map(_.arrivalMillis).maxOption.getOrElse(0L)
    assert(latest > 0L, s"no arrival time read from $stream")
    val deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos
    while (System.currentTimeMillis() <= latest) {
      assert(System.nanoTime() < deadline, s"the clock did not reach $latest")
      Thread.sleep(math.max(1L, math.min(50L, latest - System.currentTimeMillis() + 1)))
    }
  }
}
