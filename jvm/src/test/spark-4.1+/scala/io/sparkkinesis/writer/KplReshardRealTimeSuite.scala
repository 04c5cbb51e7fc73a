package io.sparkkinesis.writer

import java.nio.file.Files

import org.apache.spark.sql.streaming.{StreamingQuery, Trigger}
import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.testing.{Integration, LocalKinesisServer, LocalKinesisServers, SharedSparkSession}
import io.sparkkinesis.testing.TestStreams._

/**
 * Issue 35 in real-time mode: one batch of five minutes, so each writer lives through the split and the merge of
 * its target stream with the shard map it listed when it began ([[KplReshardScenario]]), on both local servers.
 */
@Integration
class KplReshardRealTimeSuite extends AnyFunSuite with LocalKinesisServers with SharedSparkSession {

  override protected def beforeAll(): Unit = {
    super.beforeAll()
    spark.conf.set("spark.sql.streaming.realTimeMode.minBatchDuration", "1000")
  }

  private def start(server: LocalKinesisServer, input: String, output: String): StreamingQuery = {
    // The Kinesis sink is not in Spark's real-time allowlist: the check is off while this query starts.
    spark.conf.set("spark.sql.streaming.realTimeMode.allowlistCheck", "false")
    try spark.readStream.format("kinesis")
        .options(options(server, input) ++ Map("initialPosition" -> "trim_horizon", "minFetchPeriod" -> "50ms",
          "shardDiscoveryInterval" -> "1s"))
        .load()
        .selectExpr(KplReshardScenario.OutputColumns: _*)
        .writeStream.format("kinesis")
        .options(options(server, output) ++ KplReshardScenario.SinkOptions + ("maxRecordDelay" -> "10ms"))
        .option("checkpointLocation", Files.createTempDirectory("kpl-reshard-rt").toString)
        // Spark tracks progress asynchronously in real-time mode only for the sinks it knows.
        .option("asyncProgressTrackingEnabled", "false")
        .outputMode("update").trigger(Trigger.RealTime("5 minutes")).start()
    finally spark.conf.unset("spark.sql.streaming.realTimeMode.allowlistCheck")
  }

  for (kind <- LocalKinesisServer.Kinds)
    test(s"real-time, $kind: rows written with aggregation=kpl across a split and a merge each have a copy a " +
      "range-filtering consumer keeps, each key in write order") {
      val server = localKinesis(kind)
      KplReshardScenario.run(server, "kpl-rt")((input, output) => start(server, input, output))
    }
}
