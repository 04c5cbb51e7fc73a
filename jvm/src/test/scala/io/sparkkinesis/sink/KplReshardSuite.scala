package io.sparkkinesis.sink

import java.nio.file.Files

import org.apache.spark.sql.streaming.{StreamingQuery, Trigger}
import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.aws.KinesisClients
import io.sparkkinesis.sink.SinkTestStreams.{row, textSchema, writeTask}
import io.sparkkinesis.testing.{Integration, KclStyleReader, LocalKinesisServer, LocalKinesisServers, Resharding}
import io.sparkkinesis.testing.SharedSparkSession
import io.sparkkinesis.testing.TestStreams._

/**
 * Issue 35: `aggregation=kpl` across a reshard of the target stream. One writer whose shard map was listed just
 * before a split or a merge (the fault-injecting client reshards before the first PutRecords call), and queries in
 * micro-batches ([[KplReshardScenario]]; the real-time mode's is `KplReshardRealTimeSuite`) on both local servers.
 */
@Integration
class KplReshardSuite extends AnyFunSuite with LocalKinesisServers with SharedSparkSession {

  private def start(server: LocalKinesisServer, input: String, output: String): StreamingQuery =
    spark.readStream.format("kinesis")
      .options(options(server, input) ++ Map("initialPosition" -> "trim_horizon", "minFetchPeriod" -> "50ms",
        "shardDiscoveryInterval" -> "1s"))
      .load()
      .selectExpr(KplReshardScenario.OutputColumns: _*)
      .writeStream.format("kinesis").options(options(server, output) ++ KplReshardScenario.SinkOptions)
      .option("checkpointLocation", Files.createTempDirectory("kpl-reshard").toString)
      .trigger(Trigger.ProcessingTime("300 milliseconds")).start()

  for (kind <- LocalKinesisServer.Kinds)
    test(s"micro-batch, $kind: rows written with aggregation=kpl across a split and a merge each have a copy a " +
      "range-filtering consumer keeps, each key in write order") {
      val server = localKinesis(kind)
      KplReshardScenario.run(server, "kpl-mb")((input, output) => start(server, input, output))
    }

  /**
   * One task's rows (`Rows` of [[KplReshardScenario]], small aggregates, each call sent as soon as it has one)
   * through a writer on kinesalite whose first PutRecords call is preceded by `reshard` of the stream: aggregates
   * packed before the writer learns of the reshard and after it are both in flight or waiting. Returns the writer's
   * metrics and its client.
   */
  private def writeAcross(stream: String)(reshard: => Unit): (Map[String, Long], FaultInjectingClient) = {
    val server = kinesalite
    val fake = new FaultInjectingClient(Some(KinesisClients.async(connection(server), 16)),
      beforePutRecords = n => if (n == 0) reshard)
    val metrics = writeTask(SinkTestStreams.options(server, stream, FixedClientFactory(fake),
        KplReshardScenario.SinkOptions ++ Map("aggregationMaxSize" -> "1k", "maxRecordsPerRequest" -> "1")), textSchema,
      KplReshardScenario.records(0, KplReshardScenario.Rows).iterator.map { case (k, d) => row(d, k) })
    val problems = KplReshardScenario.problems(KclStyleReader.read(server, stream), KplReshardScenario.Rows)
    assert(problems.isEmpty, problems.mkString("; "))
    (metrics, fake)
  }

  test("a writer whose shard map predates a split re-sends the rows of an aggregate that landed in the wrong child") {
    val stream = freshStream(kinesalite, "kpl-split", 1)
    val (metrics, fake) = writeAcross(stream)(split(kinesalite, stream, Resharding.openShards(kinesalite, stream).head))
    assert(metrics(SinkMetrics.ResentRecords) > 0, s"nothing re-sent: $metrics")
    assert(metrics(SinkMetrics.RecordsWritten) == KplReshardScenario.Rows)
    assert(fake.listShardsCalls == 2, "listed when the writer began, and again when an aggregate landed elsewhere")
  }

  test("a writer whose shard map predates a merge lists the shards again and re-sends nothing") {
    val stream = freshStream(kinesalite, "kpl-merge", 2)
    val (metrics, fake) = writeAcross(stream) {
      val open = Resharding.openShards(kinesalite, stream)
      merge(kinesalite, stream, open(0), open(1))
    }
    assert(fake.listShardsCalls == 2, "listed when the writer began, and again when an aggregate landed elsewhere")
    assert(metrics(SinkMetrics.ResentRecords) == 0L, s"$metrics")
    assert(metrics(SinkMetrics.RecordsWritten) == KplReshardScenario.Rows)
  }
}
