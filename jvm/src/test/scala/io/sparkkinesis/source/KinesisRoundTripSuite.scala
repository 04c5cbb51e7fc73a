package io.sparkkinesis.source

import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.testing.{Integration, LocalKinesisServer, LocalKinesisServers, SharedSparkSession}
import io.sparkkinesis.testing.TestStreams._

/** The connector writes rows and reads them back, on both local servers, from the JVM API. */
@Integration
class KinesisRoundTripSuite extends AnyFunSuite with LocalKinesisServers with SharedSparkSession {

  for (kind <- Seq("kinesis-mock", "kinesalite")) {
    test(s"rows written by the sink are read back once each by the source ($kind)") {
      val server = serverOf(kind)
      val stream = freshStream(server, "roundtrip", 3)
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
