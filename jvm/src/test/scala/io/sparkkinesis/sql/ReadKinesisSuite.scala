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
