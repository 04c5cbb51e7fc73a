package io.sparkkinesis.sql

import java.nio.file.Files

import org.apache.spark.sql.streaming.Trigger
import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.testing.{Integration, LocalKinesisServers, SharedSparkSession, TestStreams}
import io.sparkkinesis.testing.TestStreams.{put, readAll}

/**
 * A stream as a table of Spark's session catalog (`CREATE TABLE ... USING kinesis OPTIONS (...)`), on kinesalite:
 * read with `SELECT` and `readStream.table`, written with `INSERT INTO`, as the DataFrame API reads and writes it.
 */
@Integration
class SessionCatalogTableSuite extends AnyFunSuite with LocalKinesisServers with SharedSparkSession {

  override protected def sparkConf: Map[String, String] =
    Map("spark.sql.warehouse.dir" -> Files.createTempDirectory("kinesis-warehouse").toString)

  private def server = kinesalite

  /** `CREATE TABLE <table> USING kinesis OPTIONS (...)` over `stream`, with the server's connection options. */
  private def createTable(table: String, stream: String, extra: Map[String, String] = Map.empty): Unit = {
    val options = (TestStreams.options(server, stream) ++ extra).map { case (k, v) => s"$k '$v'" }.mkString(", ")
    spark.sql(s"CREATE TABLE $table USING kinesis OPTIONS ($options)")
  }

  test("SELECT reads what the stream holds, INSERT INTO writes through the sink, as the DataFrame API does") {
    val stream = TestStreams.freshStream(server, "sql-table", 2)
    put(server, stream, (0 until 300).map(i => s"k${i % 7}" -> s"r$i"))
    createTable("orders_rw", stream, Map("initialPosition" -> "trim_horizon"))
    assert(spark.table("orders_rw").schema.fieldNames.toSeq == Seq("partitionKey", "data", "stream", "shardId",
        "sequenceNumber", "approximateArrivalTimestamp", "subSequenceNumber"), "format kinesis's columns")

    val read = spark.sql("SELECT CAST(data AS STRING) AS d, partitionKey FROM orders_rw").collect()
      .map(r => (r.getString(0), r.getString(1)))
    assert(read.sorted.toSeq == (0 until 300).map(i => (s"r$i", s"k${i % 7}")).sorted)

    spark.sql("INSERT INTO orders_rw SELECT CONCAT('w', CAST(id AS STRING)) AS data, " +
      "CAST(id % 5 AS STRING) AS partitionKey FROM range(120)")
    val written = readAll(server, stream).filter(_.text.startsWith("w"))
    assert(written.map(r => (r.text, r.partitionKey)).sorted ==
      (0 until 120).map(i => (s"w$i", (i % 5).toString)).sorted)
  }

  test("readStream.table reads the table's stream, every record once, with the read's own options laid over") {
    val stream = TestStreams.freshStream(server, "sql-stream", 2)
    put(server, stream, (0 until 500).map(i => s"k${i % 11}" -> s"r$i"))
    // The table says latest; the read asks for the trim horizon, which must win for all 500 to be read.
    createTable("orders_stream", stream, Map("initialPosition" -> "latest"))
    val query = spark.readStream.option("initialPosition", "trim_horizon").table("orders_stream")
      .selectExpr("CAST(data AS STRING) AS d")
      .writeStream.format("memory").queryName("orders_stream_out")
      .option("checkpointLocation", Files.createTempDirectory("kinesis-sql-stream").toString)
      .trigger(Trigger.AvailableNow()).start()
    assert(query.awaitTermination(180000L), "the AvailableNow query did not end within 3 minutes")
    query.exception.foreach(e => fail(e))
    val got = spark.sql("SELECT d FROM orders_stream_out").collect().map(_.getString(0)).toSeq
    assert(got.sorted == (0 until 500).map(i => s"r$i").sorted)
  }

  test("a table over a stream that does not exist fails at CREATE TABLE, naming the stream") {
    val e = intercept[Exception](createTable("orders_missing", "sql-never-created"))
    assert(e.getMessage.contains("sql-never-created"), e.getMessage)
  }

  test("the table's secret key stays out of DESCRIBE TABLE EXTENDED and SHOW CREATE TABLE") {
    val stream = TestStreams.freshStream(server, "sql-describe", 1)
    createTable("orders_secret", stream)
    val secret = TestStreams.connectionOptions(server)("awsSecretKey")
    for (statement <- Seq("DESCRIBE TABLE EXTENDED orders_secret", "SHOW CREATE TABLE orders_secret")) {
      val shown = spark.sql(statement).collect().map(_.mkString(" | ")).mkString("\n")
      assert(shown.contains(stream), s"$statement does not show the table's stream:\n$shown")
      assert(!shown.contains(secret), s"$statement shows the secret key:\n$shown")
    }
  }
}
