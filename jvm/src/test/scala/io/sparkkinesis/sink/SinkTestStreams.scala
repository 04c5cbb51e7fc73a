package io.sparkkinesis.sink

import java.time.Duration

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.types.{BinaryType, StringType, StructField, StructType}
import org.apache.spark.unsafe.types.UTF8String

import io.sparkkinesis.aws.{AwsConnection, CredentialsConfig, KinesisClients, StreamRef}
import io.sparkkinesis.testing.LocalKinesisServer
import software.amazon.awssdk.services.kinesis.KinesisClient
import software.amazon.awssdk.services.kinesis.model._

/** A record as read back from a stream. */
final case class ReadRecord(shardId: String, partitionKey: String, data: Array[Byte], sequenceNumber: String) {
  def text: String = new String(data, java.nio.charset.StandardCharsets.UTF_8)
}

/** Streams on a local server for sink tests: create, read back, and build writers that write to them. */
object SinkTestStreams {
  private val Mi = 1024L * 1024

  def connection(server: LocalKinesisServer): AwsConnection =
    AwsConnection("us-east-1", Some(server.endpoint),
      CredentialsConfig.StaticKeys("local-test-key", "local-test-secret", None), server.cborEnabled)

  def syncClient(server: LocalKinesisServer): KinesisClient = KinesisClients.sync(connection(server))

  def createStream(server: LocalKinesisServer, name: String, shards: Int): Unit = {
    val client = syncClient(server)
    client.createStream(CreateStreamRequest.builder().streamName(name).shardCount(shards).build())
    val deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos
    while (client.describeStreamSummary(DescribeStreamSummaryRequest.builder().streamName(name).build())
      .streamDescriptionSummary().streamStatus() != StreamStatus.ACTIVE) {
      assert(System.nanoTime() < deadline, s"stream $name did not become ACTIVE")
      Thread.sleep(50)
    }
  }

  /** Every record of every shard from TRIM_HORIZON until caught up, shard by shard in sequence order. */
  def readAll(server: LocalKinesisServer, stream: String, timeout: Duration = Duration.ofSeconds(120)): Seq[ReadRecord] = {
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
        r.records().asScala.foreach(x => out += ReadRecord(shard.shardId(), x.partitionKey(),
          x.data().asByteArray(), x.sequenceNumber()))
        iterator = r.nextShardIterator()
        done = r.records().isEmpty && Option(r.millisBehindLatest()).forall(_ == 0L)
      }
      out.result()
    }.toSeq
  }

  val textSchema: StructType = StructType(Seq(StructField("data", StringType), StructField("partitionKey", StringType)))
  val binarySchema: StructType = StructType(Seq(StructField("data", BinaryType), StructField("partitionKey", StringType)))

  def row(values: Any*): InternalRow = InternalRow.fromSeq(values.map {
    case s: String => UTF8String.fromString(s)
    case other => other
  })

  /** Sink options for `stream` on `server`, through `client`, with the given option overrides. */
  def options(server: LocalKinesisServer, stream: String, client: SinkClientFactory,
              extra: Map[String, String] = Map.empty, hasStreamColumn: Boolean = false): SinkOptions = {
    val base = Map("streamName" -> stream, "endpointUrl" -> server.endpoint, "region" -> "us-east-1",
      "awsAccessKeyId" -> "local-test-key", "awsSecretKey" -> "local-test-secret",
      "cborEnabled" -> server.cborEnabled.toString)
    SinkOptions.parse((base ++ extra).filter(_._2 != null).asJava, hasStreamColumn).copy(clientFactory = client)
  }

  /** Writes rows as one task would, commits, and returns the writer's final metrics by name. */
  def writeTask(options: SinkOptions, schema: StructType, rows: Iterator[InternalRow],
                partitionId: Int = 0): Map[String, Long] = {
    val writer = new KinesisDataWriter(options, SinkSchema.of(schema, options.partitionKeyColumn), partitionId, 1L)
    try {
      writer.writeAll(rows.asJava)
      writer.commit()
      writer.currentMetricsValues().map(m => m.name() -> m.value()).toMap
    } catch {
      case e: Throwable => writer.abort(); throw e
    } finally writer.close()
  }

  val MaxRequestBytes: Long = 5 * Mi
}
