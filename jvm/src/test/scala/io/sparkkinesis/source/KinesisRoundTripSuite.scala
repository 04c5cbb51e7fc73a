package io.sparkkinesis.source

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.SparkSession
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.aws.{AwsConnection, CredentialsConfig, KinesisClients}
import io.sparkkinesis.testing.{LocalKinesisServer, LocalKinesisServers}
import software.amazon.awssdk.services.kinesis.model.{CreateStreamRequest, DescribeStreamSummaryRequest, StreamStatus}

/** The connector writes rows and reads them back, on both local servers, from the JVM API. */
class KinesisRoundTripSuite extends AnyFunSuite with LocalKinesisServers with BeforeAndAfterAll {

  private lazy val spark = SparkSession.builder()
    .master("local[2]")
    .appName("KinesisRoundTripSuite")
    .config("spark.ui.enabled", "false")
    .config("spark.driver.host", "127.0.0.1")
    .config("spark.driver.bindAddress", "127.0.0.1")
    .config("spark.sql.shuffle.partitions", "2")
    .getOrCreate()

  override def afterAll(): Unit = {
    try spark.stop() finally super.afterAll()
  }

  private def options(server: LocalKinesisServer, stream: String): Map[String, String] = Map(
    "streamName" -> stream, "endpointUrl" -> server.endpoint, "region" -> "us-east-1",
    "awsAccessKeyId" -> "local-test-key", "awsSecretKey" -> "local-test-secret",
    "cborEnabled" -> server.cborEnabled.toString)

  private def createStream(server: LocalKinesisServer, name: String, shards: Int): Unit = {
    val client = KinesisClients.sync(AwsConnection("us-east-1", Some(server.endpoint),
      CredentialsConfig.StaticKeys("local-test-key", "local-test-secret", None), server.cborEnabled))
    client.createStream(CreateStreamRequest.builder().streamName(name).shardCount(shards).build())
    val deadline = System.nanoTime() + 30L * 1000 * 1000 * 1000
    while (client.describeStreamSummary(DescribeStreamSummaryRequest.builder().streamName(name).build())
      .streamDescriptionSummary().streamStatus() != StreamStatus.ACTIVE) {
      assert(System.nanoTime() < deadline, s"stream $name did not become ACTIVE")
      Thread.sleep(50)
    }
  }

  for (kind <- Seq("kinesis-mock", "kinesalite")) {
    test(s"rows written by the sink are read back once each by the source ($kind)") {
      val server = serverOf(kind)
      val stream = s"roundtrip-${System.nanoTime()}"
      createStream(server, stream, 3)
      val n = 2000
      val s = spark
      import s.implicits._
      (0 until n).map(i => (s"payload-$i", s"key-${i % 37}")).toDF("data", "partitionKey")
        .repartition(2)
        .write.format("kinesis").options(options(server, stream)).mode("append").save()

      val rows = spark.read.format("kinesis").options(options(server, stream)).load()
        .selectExpr("CAST(data AS STRING) AS data", "partitionKey", "shardId").collect()

      assert(rows.length == n)
      assert(rows.map(r => (r.getString(0), r.getString(1))).toSet ==
        (0 until n).map(i => (s"payload-$i", s"key-${i % 37}")).toSet)
      // Records with one partition key land in one shard.
      rows.groupBy(_.getString(1)).foreach { case (key, rs) =>
        assert(rs.map(_.getString(2)).distinct.length == 1, s"key $key spread over shards")
      }
    }
  }

  private def serverOf(kind: String): LocalKinesisServer = kind match {
    case "kinesis-mock" => kinesisMock
    case "kinesalite" => kinesalite
  }

  test("a missing stream fails the read with a clear message") {
    val e = intercept[Exception](
      spark.read.format("kinesis").options(options(kinesalite, "no-such-stream")).load().collect())
    val messages = Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).map(_.getMessage).mkString("\n")
    assert(messages.contains("[KINESIS_STREAM_NOT_FOUND] Stream 'no-such-stream' does not exist"), messages)
  }
}
