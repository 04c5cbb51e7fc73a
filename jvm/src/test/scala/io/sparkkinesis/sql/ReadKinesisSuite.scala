package io.sparkkinesis.sql

import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.errors.KinesisOptionException
import io.sparkkinesis.testing.ErrorText.assertMentions
import io.sparkkinesis.testing.{Integration, LocalKinesisServers, SharedSparkSession, TestStreams}
import io.sparkkinesis.testing.TestStreams.put

/** The `read_kinesis` table-valued function (`KinesisSparkExtensions`) on kinesalite. */
@Integration
class ReadKinesisSuite extends AnyFunSuite with LocalKinesisServers with SharedSparkSession {

  override protected def sparkConf: Map[String, String] =
    Map("spark.sql.extensions" -> "io.sparkkinesis.KinesisSparkExtensions")

  private def server = kinesalite

  /** The server's connection options as named arguments, with Databricks' names for the keys. */
  private def connection: String = {
    val o = TestStreams.connectionOptions(server)
    s"endpointUrl => '${o("endpointUrl")}', region => '${o("region")}', awsAccessKey => '${o("awsAccessKeyId")}', " +
      s"awsSecretKey => '${o("awsSecretKey")}', cborEnabled => ${o("cborEnabled")}"
  }

  test("read_kinesis reads every record of the stream, its named arguments the read's options") {
    val stream = TestStreams.freshStream(server, "sql-tvf", 3)
    put(server, stream, (0 until 400).map(i => s"k${i % 13}" -> s"r$i"))
    val rows = spark.sql(s"SELECT CAST(data AS STRING) AS d, partitionKey, shardId FROM read_kinesis(" +
      s"streamName => '$stream', $connection) WHERE partitionKey <> 'k0'").collect()
    val expected = (0 until 400).filter(_ % 13 != 0).map(i => (s"r$i", s"k${i % 13}"))
    assert(rows.map(r => (r.getString(0), r.getString(1))).toSeq.sorted == expected.sorted)
    assert(rows.map(_.getString(2)).distinct.length == 3, "every shard is read")
    val columns = spark.sql(s"SELECT * FROM read_kinesis(streamName => '$stream', $connection)").dtypes.toSeq
    assert(columns == spark.read.format("kinesis").options(TestStreams.options(server, stream)).load().dtypes.toSeq,
      "read_kinesis gives format kinesis's columns")
  }

  test("STREAM read_kinesis(...) is the streaming read: every record once (Spark 4.2+, whose SQL parses it)") {
    val Array(major, minor) = spark.version.split('.').take(2).map(_.toInt)
    assume(major > 4 || (major == 4 && minor >= 2), s"Spark ${spark.version} parses no STREAM before a function")
    val stream = TestStreams.freshStream(server, "sql-tvf-stream", 2)
    put(server, stream, (0 until 300).map(i => s"k${i % 13}" -> s"r$i"))
    val read = spark.sql(s"SELECT CAST(data AS STRING) AS d FROM STREAM read_kinesis(streamName => '$stream', " +
      s"initialPosition => 'trim_horizon', $connection)")
    assert(read.isStreaming, "STREAM read_kinesis(...) gave a batch read")
    val query = read.writeStream.format("memory").queryName("read_kinesis_stream")
      .option("checkpointLocation", java.nio.file.Files.createTempDirectory("sql-tvf-stream").toString)
      .trigger(org.apache.spark.sql.streaming.Trigger.AvailableNow()).start()
    try assert(query.awaitTermination(180000L), "the AvailableNow read did not end within 3 minutes")
    finally query.stop()
    query.exception.foreach(e => fail(e))
    val got = spark.sql("SELECT d FROM read_kinesis_stream").collect().map(_.getString(0)).toSeq
    assert(got.sorted == (0 until 300).map(i => s"r$i").sorted)
  }

  test("read_kinesis names what is wrong: an argument without a name, a missing option, an unknown one") {
    val positional = intercept[KinesisOptionException](spark.sql(s"SELECT * FROM read_kinesis('orders', $connection)"))
    assertMentions(positional, "argument 1 of read_kinesis", "=>")
    val missing = intercept[KinesisOptionException](spark.sql(s"SELECT * FROM read_kinesis($connection)"))
    assertMentions(missing, "[KINESIS_MISSING_OPTION]", "streamName")
    val unknown = intercept[KinesisOptionException](
      spark.sql(s"SELECT * FROM read_kinesis(streamName => 'orders', streamNme => 'x', $connection)"))
    assertMentions(unknown, "[KINESIS_UNKNOWN_OPTION]", "streamNme")
  }
}
