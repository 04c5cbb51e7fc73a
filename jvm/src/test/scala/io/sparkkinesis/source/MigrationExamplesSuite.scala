package io.sparkkinesis.source

import java.nio.file.{Files, Paths}

import io.sparkkinesis.compat.CollectionConverters._

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.streaming.{StreamingQuery, Trigger}
import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.services.kinesis.KinesisClient
import software.amazon.awssdk.services.kinesis.model._

import io.sparkkinesis.aws.{AwsConnection, CredentialsConfig, KinesisClients}
import io.sparkkinesis.testing.{Integration, LocalKinesisServer, LocalKinesisServers, SharedSparkSession}

/**
 * The examples other connectors' docs print, run here unchanged (docs/migrating.md): the reads of Databricks' Kinesis
 * pages (their options as printed, pointed at the local server with Databricks' own `endpoint` option), the reads
 * (GetRecords and SubscribeToShard) and the write of the awslabs README under `aws-kinesis`, qubole kinesis-sql's
 * read, and a DStreams `KinesisUtils` read as its guide translates it. Placeholders (stream names, keys, endpoint
 * variables) get local values; each example reads every record put after it started. Examples that give no
 * credentials use the SDK's default chain, here the `aws.accessKeyId` system property, the first place it looks.
 */
@Integration
class MigrationExamplesSuite extends AnyFunSuite with LocalKinesisServers with SharedSparkSession {
  import KinesisStreamingSourceSuite.Collector

  private def server: LocalKinesisServer = kinesisMock
  private val accessKey = "local-test-key"
  private val secretKey = "local-test-secret"

  override protected def beforeAll(): Unit = {
    super.beforeAll()
    System.setProperty("aws.accessKeyId", accessKey)
    System.setProperty("aws.secretAccessKey", secretKey)
  }

  override protected def afterAll(): Unit =
    try {
      System.clearProperty("aws.accessKeyId")
      System.clearProperty("aws.secretAccessKey")
    } finally super.afterAll()

  private def client(region: String): KinesisClient = KinesisClients.sync(AwsConnection(region,
      Some(server.endpoint), CredentialsConfig.StaticKeys(accessKey, secretKey, None), server.cborEnabled))

  /** Creates `stream` in `region` (kinesis-mock keeps streams per region) and waits until it is ACTIVE. */
  private def create(region: String, stream: String): Unit = {
    val c = client(region)
    c.createStream(CreateStreamRequest.builder().streamName(stream).shardCount(2).build())
    val deadline = System.nanoTime() + 30L * 1000 * 1000 * 1000
    while (c.describeStreamSummary(DescribeStreamSummaryRequest.builder().streamName(stream).build())
        .streamDescriptionSummary().streamStatus() != StreamStatus.ACTIVE) {
      assert(System.nanoTime() < deadline, s"$stream did not become ACTIVE")
      Thread.sleep(50)
    }
  }

  private def put(region: String, stream: String, records: Seq[String]): Unit = {
    val entries = records.zipWithIndex.map { case (r, i) =>
      PutRecordsRequestEntry.builder().partitionKey(s"k${i % 7}").data(SdkBytes.fromUtf8String(r)).build()
    }
    val response = client(region).putRecords(
      PutRecordsRequest.builder().streamName(stream).records(entries.asJava).build())
    assert(response.failedRecordCount() == 0)
  }

  /** Waits until `done`, failing with the query's error or `what` after two minutes. */
  private def await(query: StreamingQuery, what: String)(done: => Boolean): Unit = {
    val deadline = System.nanoTime() + 120L * 1000 * 1000 * 1000
    while (!done) {
      query.exception.foreach(e => fail(e))
      assert(query.isActive, s"$what: the query stopped")
      assert(System.nanoTime() < deadline, s"$what: not within 2 minutes")
      Thread.sleep(100)
    }
  }

  /**
   * Starts `df` into a collecting sink, waits until the source has pinned where it starts (so `latest` is before
   * the records), puts `count` records into `stream` of `region`, and checks they are read, each once; with
   * `streamColumn`, as the program selects that column, each with `stream` there.
   */
  private def readsEveryRecord(
      name: String,
      df: DataFrame,
      region: String,
      stream: String,
      count: Int = 30,
      streamColumn: Option[String] = None): StreamingQuery = {
    val checkpoint = Files.createTempDirectory("migration-example")
    val sink = new Collector
    val selected = streamColumn.fold(df.selectExpr("CAST(data AS STRING) AS data"))(c =>
      df.selectExpr(s"CONCAT(CAST(data AS STRING), ' from ', $c) AS data"))
    val query = selected.writeStream.foreachBatch(sink)
      .option("checkpointLocation", checkpoint.toString).trigger(Trigger.ProcessingTime("300 milliseconds")).start()
    await(query, s"$name: the start position pinned")(
      Files.exists(checkpoint.resolve("sources/0/kinesis-initial-offset.json")))
    val records = (0 until count).map(i => s"$name-$i")
    put(region, stream, records)
    await(query, s"$name: $count records")(sink.rows.size >= count)
    await(query, s"$name: a progress after the records")(
      query.recentProgress.map(_.numInputRows).sum >= count)
    query.stop()
    val expected = streamColumn.fold(records)(_ => records.map(r => s"$r from $stream"))
    assert(sink.rows.asScala.map(_._2).toSeq.sorted == expected.sorted, s"$name: every record once")
    query
  }

  private def metrics(query: StreamingQuery): Map[String, String] =
    query.recentProgress.last.sources.head.metrics.asScala.toMap

  test("Databricks' read examples, options as printed, read every record; its metric names are in the progress") {

    /** A fresh stream for each example (`<stream-name>` in the docs), read as the docs begin every read. */
    def reader(stream: String) = {
      create("us-west-2", stream)
      spark.readStream.format("kinesis").option("streamName", stream).option("region", "us-west-2")
        .option("endpoint", server.endpoint)
    }
    // "Connect to Amazon Kinesis": keys and the latest position. Its columns are Databricks' (names, order, types),
    // then this connector's subSequenceNumber, and a program selecting Databricks' `stream` finds the stream there.
    val keys = reader("db-latest").option("initialPosition", "latest")
      .option("awsAccessKey", accessKey).option("awsSecretKey", secretKey).load()
    assert(keys.dtypes.toSeq == Seq("partitionKey" -> "StringType", "data" -> "BinaryType", "stream" -> "StringType",
      "shardId" -> "StringType", "sequenceNumber" -> "StringType", "approximateArrivalTimestamp" -> "TimestampType",
      "subSequenceNumber" -> "LongType"))
    val latest = readsEveryRecord("keys-latest", keys, "us-west-2", "db-latest", streamColumn = Some("stream"))
    val m = metrics(latest)
    Seq("avgMsBehindLatest", "maxMsBehindLatest", "minMsBehindLatest", "totalPrefetchedBytes", "numTotalShards",
      "numClosedShards", "numStreams", "numRegisteredConsumers", "numAwsRateLimitErrors", "mode").foreach { k =>
      assert(m.contains(k), s"metric $k in ${m.keys.toSeq.sorted}")
    }
    assert(m("numTotalShards") == "2" && m("numStreams") == "1" && m("mode") == "polling")
    assert(m("totalPrefetchedBytes") == m("bufferedBytes") && m("numClosedShards") == "0")
    // The WordCount notebook: TRIM_HORIZON.
    readsEveryRecord("keys-trim-horizon",
      reader("db-trim").option("initialPosition", "TRIM_HORIZON")
        .option("awsAccessKey", accessKey).option("awsSecretKey", secretKey).load(), "us-west-2", "db-trim")
    // The at_timestamp JSON form, as the option's documentation prints it.
    readsEveryRecord("at-timestamp-json",
      reader("db-at").option("initialPosition",
        """{"at_timestamp": "06/25/2020 10:23:45 PDT", "format": "MM/dd/yyyy HH:mm:ss ZZZ"}""")
        .option("awsAccessKey", accessKey).option("awsSecretKey", secretKey).load(), "us-west-2", "db-at")
    // The enhanced fan-out page.
    val efo = readsEveryRecord("efo",
      reader("db-efo").option("consumerMode", "efo")
        .option("consumerName", "databricks-efo").option("requireConsumerDeregistration", "true").load(),
      "us-west-2", "db-efo")
    assert(metrics(efo)("mode") == "efo" && metrics(efo)("numRegisteredConsumers") == "1")
  }

  test("the awslabs README's reads (GetRecords, SubscribeToShard) and its write run under aws-kinesis") {
    val endpointUrl = server.endpoint
    create("us-east-2", "teststream")
    val getRecords = spark.readStream
      .format("aws-kinesis")
      .option("kinesis.region", "us-east-2")
      .option("kinesis.streamName", "teststream")
      .option("kinesis.consumerType", "GetRecords")
      .option("kinesis.endpointUrl", endpointUrl)
      .option("kinesis.startingposition", "LATEST")
      .load
    assert(getRecords.dtypes.toSeq == Seq("data" -> "BinaryType", "streamName" -> "StringType",
        "partitionKey" -> "StringType", "sequenceNumber" -> "StringType",
        "approximateArrivalTimestamp" -> "TimestampType"),
      "their five columns, exactly")
    readsEveryRecord("awslabs-getrecords", getRecords, "us-east-2", "teststream", streamColumn = Some("streamName"))
    val subscribe = spark.readStream
      .format("aws-kinesis")
      .option("kinesis.region", "us-east-2")
      .option("kinesis.streamName", "teststream")
      .option("kinesis.consumerType", "SubscribeToShard")
      .option("kinesis.endpointUrl", endpointUrl)
      .option("kinesis.startingposition", "LATEST")
      .option("kinesis.consumerName", "TestConsumer")
      .load()
    readsEveryRecord("awslabs-subscribetoshard", subscribe, "us-east-2", "teststream")
    val consumers = client("us-east-2").listStreamConsumers(ListStreamConsumersRequest.builder().streamARN(
        client("us-east-2").describeStreamSummary(DescribeStreamSummaryRequest.builder().streamName("teststream")
            .build()).streamDescriptionSummary().streamARN()).build()).consumers().asScala
    assert(!consumers.exists(c => c.consumerName() == "TestConsumer" && c.consumerStatus() == ConsumerStatus.ACTIVE),
      "as with awslabs, the consumer is deregistered when the query stops")

    // The write, without the README's groupBy(...).count(), which Spark refuses in append mode.
    create("us-east-1", "sparkSinkTest")
    val checkpoint = Files.createTempDirectory("awslabs-sink")
    val write = getRecords
      .selectExpr("CAST(rand() AS STRING) as partitionKey", "CAST(data AS STRING)")
      .writeStream
      .format("aws-kinesis")
      .outputMode("append")
      .option("kinesis.region", "us-east-1")
      .option("kinesis.streamName", "sparkSinkTest")
      .option("kinesis.endpointUrl", endpointUrl)
      .option("checkpointLocation", checkpoint.toString)
      .start()
    val records = (0 until 40).map(i => s"sink-$i")
    try {
      await(write, "the sink query's start position")(
        Files.exists(Paths.get(checkpoint.toString, "sources/0/kinesis-initial-offset.json")))
      put("us-east-2", "teststream", records)
      await(write, "40 records written")(write.recentProgress.map(_.numInputRows).sum >= 40)
    } finally write.stop()
    val written = spark.read.format("kinesis").option("streamName", "sparkSinkTest").option("region", "us-east-1")
      .option("endpointUrl", endpointUrl).load().selectExpr("CAST(data AS STRING)").collect().map(_.getString(0))
    assert(written.toSeq.sorted == records.sorted, "every record written once")
    assert(io.sparkkinesis.testing.TestStreams.readAll(server, "sparkSinkTest").size < records.size,
      "as the awslabs sink, this one aggregates by default under aws-kinesis")
  }

  test("qubole kinesis-sql's read and a DStreams KinesisUtils read, as their guides give them, read every record") {
    create("us-east-1", "spark-streaming-example")
    val qubole = spark
      .readStream
      .format("kinesis")
      .option("streamName", "spark-streaming-example")
      .option("endpointUrl", server.endpoint)
      .option("awsAccessKeyId", accessKey)
      .option("awsSecretKey", secretKey)
      .option("startingposition", "TRIM_HORIZON")
      .load
    readsEveryRecord("qubole", qubole, "us-east-1", "spark-streaming-example")
    create("us-east-1", "orders")
    val dstreams = spark.readStream.format("kinesis")
      .option("streamName", "orders")
      .option("endpointUrl", server.endpoint)
      .option("region", "us-east-1")
      .option("initialPosition", "trim_horizon")
      .load()
      .selectExpr("data")
    readsEveryRecord("dstreams", dstreams, "us-east-1", "orders")
  }
}
