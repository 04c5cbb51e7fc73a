package io.sparkkinesis.sql

import java.lang.reflect.Proxy

import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.compat.CollectionConverters._

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

  test("the extensions named in spark.sql.extensions and found in the jar's service file are added once") {
    assert(spark.conf.get("spark.sql.extensions").contains(classOf[io.sparkkinesis.KinesisSparkExtensions].getName))
    val providers = java.util.ServiceLoader.load(classOf[org.apache.spark.sql.SparkSessionExtensionsProvider]).asScala
    assert(providers.exists(_.isInstanceOf[io.sparkkinesis.KinesisSparkExtensions]), "the service file is not found")
    // The session's parser (Spark 3.5's and 4.x's sessions both have sessionState.sqlParser): wrapped, once.
    val state = spark.getClass.getMethod("sessionState").invoke(spark)
    val parser = state.getClass.getMethod("sqlParser").invoke(state)
    assert(Proxy.isProxyClass(parser.getClass), s"the parser is not the connector's wrapper: ${parser.getClass}")
    val inner = Proxy.getInvocationHandler(parser).asInstanceOf[io.sparkkinesis.SecretArguments.Handler].delegate
    assert(!Proxy.isProxyClass(inner.getClass), "the parser is wrapped twice: the extensions were added twice")
  }

  test("a secret argument of read_kinesis appears in no plan EXPLAIN EXTENDED prints, nor in an error") {
    val stream = TestStreams.freshStream(server, "sql-tvf-secret", 1)
    val o = TestStreams.connectionOptions(server)
    val secret = "sEcReT-tvf-49-do-not-show"
    val arguments = s"streamName => '$stream', endpointUrl => '${o("endpointUrl")}', region => '${o("region")}', " +
      s"awsAccessKey => '${o("awsAccessKeyId")}', awsSecretKey => '$secret', cborEnabled => ${o("cborEnabled")}"
    val Array(major, minor) = spark.version.split('.').take(2).map(_.toInt)
    val forms = Seq(s"SELECT * FROM read_kinesis($arguments)") ++
      (if (major > 4 || (major == 4 && minor >= 2)) Seq(s"SELECT * FROM STREAM read_kinesis($arguments)") else Nil)
    for (form <- forms) {
      val explained = spark.sql(s"EXPLAIN EXTENDED $form").collect().map(_.getString(0)).mkString("\n")
      assert(explained.contains("== Parsed Logical Plan ==") && explained.contains("*********(redacted)"), explained)
      assert(explained.contains(stream), s"the plans do not name the stream:\n$explained")
      assert(!explained.contains(secret), s"a plan shows the secret:\n$explained")
    }
    val planned = spark.sql(forms.head).queryExecution.toString
    assert(planned.contains("*********(redacted)") && !planned.contains(secret), planned)
    // The secret is still the read's: a wrong one is refused by name (not shown), a right one reads.
    val bad = intercept[KinesisOptionException](
      spark.sql(s"SELECT * FROM read_kinesis(streamName => '$stream', region => 'x', awsSecretKey => " +
        s"'$secret', awsAccessKey => 'AKID', foo => 1)"))
    assert(!bad.getMessage.contains(secret), bad.getMessage)
    assert(spark.sql(s"SELECT count(*) FROM read_kinesis($arguments)").head().getLong(0) == 0L)
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
