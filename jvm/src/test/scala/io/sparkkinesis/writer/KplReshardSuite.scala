package io.sparkkinesis.writer

import java.nio.charset.StandardCharsets
import java.nio.file.Files
import java.util.concurrent.TimeUnit

import org.apache.spark.sql.Row
import org.apache.spark.sql.streaming.{StreamingQuery, Trigger}
import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.aws.KinesisClients
import io.sparkkinesis.errors.KinesisException
import io.sparkkinesis.writer.SinkTestStreams.{row, textSchema, writeTask}
import io.sparkkinesis.testing.{Integration, KclStyleReader, LocalKinesisServer, LocalKinesisServers, Resharding}
import io.sparkkinesis.testing.UserRecordRead
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
  private def writeAcross(
      stream: String,
      staleListing: Int => Boolean = _ => false,
      extra: Map[String, String] = Map())(
      reshard: => Unit): (Map[String, Long], FaultInjectingClient) = {
    val server = kinesalite
    val fake = new FaultInjectingClient(Some(KinesisClients.async(connection(server), 16)),
      beforePutRecords = n => if (n == 0) reshard, staleListing = staleListing)
    val metrics = writeTask(SinkTestStreams.options(server, stream, FixedClientFactory(fake),
        KplReshardScenario.SinkOptions ++ Map("aggregationMaxSize" -> "1k", "maxRecordsPerRequest" -> "1") ++ extra),
      textSchema, KplReshardScenario.records(0, KplReshardScenario.Rows).iterator.map { case (k, d) => row(d, k) })
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

  test("a writer waits for a shard listing that lags behind a split, then re-sends what landed in the wrong child") {
    val stream = freshStream(kinesalite, "kpl-lagging", 1)
    // The writer's first listing, then three more, answer with the shards from before the split.
    val (metrics, fake) = writeAcross(stream, staleListing = n => n <= 3)(
      split(kinesalite, stream, Resharding.openShards(kinesalite, stream).head))
    assert(metrics(SinkMetrics.ResentRecords) > 0, s"nothing re-sent: $metrics")
    assert(metrics(SinkMetrics.RecordsWritten) == KplReshardScenario.Rows)
    assert(fake.listShardsCalls == 5, "listed when the writer began, three times behind the split, then once more")
  }

  test("a writer whose shard listing never shows the split fails named once maxRetries listings are spent") {
    val stream = freshStream(kinesalite, "kpl-stale", 1)
    val started = System.nanoTime()
    val e = intercept[KinesisException](writeAcross(stream, staleListing = _ => true, Map("maxRetries" -> "2"))(
        split(kinesalite, stream, Resharding.openShards(kinesalite, stream).head)))
    val seconds = (System.nanoTime() - started) / 1e9
    assert(e.condition == "KINESIS_SHARD_LISTING_BEHIND", e.getMessage)
    assert(e.getMessage.contains(stream) && e.getMessage.contains("'maxRetryDuration'") &&
        e.getMessage.contains("'aggregation'"), e.getMessage)
    assert(e.getMessage.contains("after 3 listings"), s"listed again until maxRetries (2) was passed: ${e.getMessage}")
    assert(seconds < 60, s"took $seconds s")
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

  /**
   * Rows the source read (data, partition key, shard, sequence number, sub-sequence number), in the order a consumer
   * following the lineage sees them: parents' shards before their children's, each in sequence order.
   */
  private def inLineageOrder(stream: String, rows: Seq[Row]): Seq[UserRecordRead] = {
    val order = KclStyleReader.lineageOrder(shards(kinesalite, stream).map(s =>
        s.shardId() -> Seq(Option(s.parentShardId()), Option(s.adjacentParentShardId())).flatten)).zipWithIndex.toMap
    rows.sortBy(r => (order(r.getString(2)), BigInt(r.getString(3)), r.getLong(4)))
      .map(r => UserRecordRead(r.getString(2), r.getString(1), r.getString(0).getBytes(StandardCharsets.UTF_8)))
  }

  private val ReadColumns = Seq("CAST(data AS STRING) AS data", "partitionKey", "shardId", "sequenceNumber",
    "subSequenceNumber")

  /** What a read of `stream` got wrong of the rows written: duplicates, ids missing, keys out of order. */
  private def readProblems(what: String, read: Seq[UserRecordRead]): Seq[String] = {
    val ids = read.map(_.text.toInt)
    val duplicates = ids.groupBy(identity).collect { case (id, n) if n.size > 1 => id }.toSeq.sorted
    (if (duplicates.isEmpty) Nil
     else Seq(s"$what read ${duplicates.size} ids more than once (${ids.size} rows for " +
       s"${KplReshardScenario.Rows}), e.g. ${duplicates.take(8).mkString(",")}")) ++
      KplReshardScenario.problems(read, KplReshardScenario.Rows).map(p => s"$what: $p")
  }

  test("rows written with aggregation=kpl across a split are read back by the source once each, in per-key order") {
    val stream = freshStream(kinesalite, "kpl-split-read", 1)
    val (metrics, _) = writeAcross(stream)(split(kinesalite, stream, Resharding.openShards(kinesalite, stream).head))
    assert(metrics(SinkMetrics.ResentRecords) > 0, s"no aggregate landed in the wrong child, nothing to drop: $metrics")
    val opts = options(kinesalite, stream)
    // kinesalite dates records put into a new child up to a second ahead; a batch read planned before then reads none.
    awaitClockPastArrivals(kinesalite, stream)
    // A batch read (ranges read by GetRecords on the executors)...
    val batch = spark.read.format("kinesis").options(opts).load().selectExpr(ReadColumns: _*).collect().toSeq
    // ... and a streaming one (prefetch rounds and their buffers).
    val table = s"kpl_split_read_${System.nanoTime()}"
    val query = spark.readStream.format("kinesis").options(opts ++ Map("initialPosition" -> "trim_horizon",
      "minFetchPeriod" -> "50ms")).load().selectExpr(ReadColumns: _*)
      .writeStream.format("memory").queryName(table)
      .option("checkpointLocation", Files.createTempDirectory("kpl-split-read").toString)
      .trigger(Trigger.AvailableNow()).start()
    val ended =
      try query.awaitTermination(TimeUnit.SECONDS.toMillis(120))
      finally if (query.isActive) query.stop()
    query.exception.foreach(e => fail(e))
    assert(ended, "the AvailableNow read did not end within 120 s")
    val streamed = spark.table(table).collect().toSeq
    val problems = readProblems("the batch read", inLineageOrder(stream, batch)) ++
      readProblems("the streaming read", inLineageOrder(stream, streamed))
    assert(problems.isEmpty, problems.mkString("; "))
  }
}
