package io.sparkkinesis.source

import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Path, Paths}
import java.util.concurrent.{ConcurrentHashMap, ConcurrentLinkedQueue}

import io.sparkkinesis.compat.CollectionConverters._

import org.apache.spark.sql.{ForeachWriter, Row}
import org.apache.spark.sql.streaming.{StreamingQuery, Trigger}
import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.fetching.{FaultySubscriptions, SubscriptionSource}
import io.sparkkinesis.metrics.QueryMetricsRegistry
import io.sparkkinesis.offsets.{KinesisSourceOffset, OffsetJson, RecordPosition, ShardKey, ShardPosition}
import io.sparkkinesis.testing.{Integration, LocalKinesisServer, LocalKinesisServers, Resharding, SharedSparkSession}
import io.sparkkinesis.testing.TestStreams._

/**
 * Real-time mode (`Trigger.RealTime`, Spark 4.1 and later) end to end on the local servers: long-running tasks
 * read the shards and pass each record through the query as it arrives; each batch's end offset is what the tasks
 * read, merged on the driver.
 */
@Integration
class RealTimeModeSuite extends AnyFunSuite with LocalKinesisServers with SharedSparkSession
  with RealTimeQueries {
  import RealTimeModeSuite._

  /** Batches of two seconds (Spark's floor is five unless lowered, as here, for shorter tests). */
  private val trigger = Trigger.RealTime("2 seconds")

  override protected def beforeAll(): Unit = {
    super.beforeAll()
    spark.conf.set("spark.sql.streaming.realTimeMode.minBatchDuration", "1000")
  }

  private def source(server: LocalKinesisServer, stream: String, extra: Map[String, String] = Map.empty) =
    spark.readStream.format("kinesis")
      .options(options(server, stream) ++ Map("initialPosition" -> "trim_horizon", "minFetchPeriod" -> "50ms",
        "shardDiscoveryInterval" -> "1s") ++ extra)
      .load()

  /** Starts a query with Spark's real-time allowlist check off (for sinks not on it), on for the queries after. */
  private def withoutAllowlistCheck(start: => StreamingQuery): StreamingQuery = {
    spark.conf.set("spark.sql.streaming.realTimeMode.allowlistCheck", "false")
    try start
    finally spark.conf.unset("spark.sql.streaming.realTimeMode.allowlistCheck")
  }

  /** A real-time query of `stream` into a [[Collected]] sink named `sink`. */
  private def start(
      server: LocalKinesisServer,
      stream: String,
      sink: String,
      checkpoint: String,
      batches: Trigger = trigger,
      extra: Map[String, String] = Map.empty): StreamingQuery =
    source(server, stream, extra)
      .selectExpr("CAST(data AS STRING) AS data", "partitionKey", "shardId", "sequenceNumber", "subSequenceNumber")
      .writeStream.foreach(new Collected(sink)).option("checkpointLocation", checkpoint)
      .outputMode("update").trigger(batches).start()

  test("records pass a stateless transformation to the memory sink as they arrive, with their arrival times") {
    val server = kinesisMock
    val stream = freshStream(server, "rtm-memory", 2)
    val before = System.currentTimeMillis()
    put(server, stream, records(0, 200))
    // Spark's allowlist has its continuous memory sink, which only its own tests can make; the memory sink writes
    // at the end of each batch.
    val query = withoutAllowlistCheck(source(server, stream)
        .selectExpr("upper(CAST(data AS STRING)) AS data", "approximateArrivalTimestamp AS arrived")
        .writeStream.format("memory").queryName("rtm_memory").outputMode("update").trigger(trigger)
        .option("checkpointLocation", Files.createTempDirectory("rtm-memory").toString).start())
    def read: Seq[Row] = spark.table("rtm_memory").collect().toSeq
    try {
      await(query, "the 200 records put before the query")(read.size >= 200)
      put(server, stream, records(200, 300))
      await(query, "300 records")(read.size >= 300)
      val after = System.currentTimeMillis()
      assert(read.map(_.getString(0)).sorted == (0 until 300).map(i => s"R$i").sorted)
      val arrivals = read.map(_.getTimestamp(1).getTime)
      assert(arrivals.forall(t => t >= before - 1000 && t <= after + 1000), s"arrival times out of the test's span")
    } finally query.stop()
  }

  test("typed payloads decode in the query's projection as records arrive (from_glue_schema_registry)") {
    val server = kinesisMock
    val stream = freshStream(server, "rtm-typed", 2)
    val schema = new org.apache.avro.Schema.Parser().parse(
      """{"type": "record", "name": "Reading", "fields": [{"name": "id", "type": "long"},
        |  {"name": "sensor", "type": "string"}]}""".stripMargin)
    // Plain Avro, written by Avro's own writer (the registry's frame is tested where a registry runs).
    def avro(i: Int): Array[Byte] = {
      val record = new org.apache.avro.generic.GenericData.Record(schema)
      record.put("id", i.toLong)
      record.put("sensor", s"s${i % 3}")
      val out = new java.io.ByteArrayOutputStream()
      val encoder = org.apache.avro.io.EncoderFactory.get().binaryEncoder(out, null)
      new org.apache.avro.generic.GenericDatumWriter[AnyRef](schema).write(record, encoder)
      encoder.flush()
      out.toByteArray
    }
    val client = syncClient(server)
    def putTyped(range: Range): Unit = client.putRecords(
      software.amazon.awssdk.services.kinesis.model.PutRecordsRequest.builder().streamName(stream)
        .records(range.map(i =>
            software.amazon.awssdk.services.kinesis.model.PutRecordsRequestEntry.builder()
              .partitionKey(s"k${i % 10}").data(software.amazon.awssdk.core.SdkBytes.fromByteArray(avro(i))).build())
            .asJava).build())
    putTyped(0 until 100)
    val decoded = io.sparkkinesis.functions.from_glue_schema_registry(org.apache.spark.sql.functions.col("data"),
      Map("schemaDefinition" -> schema.toString, "framing" -> "none", "region" -> "us-east-1"))
    val query = withoutAllowlistCheck(source(server, stream).select(decoded.as("r")).selectExpr("r.id", "r.sensor")
        .writeStream.format("memory").queryName("rtm_typed").outputMode("update").trigger(trigger)
        .option("checkpointLocation", Files.createTempDirectory("rtm-typed").toString).start())
    def read: Seq[Row] = spark.table("rtm_typed").collect().toSeq
    try {
      await(query, "the 100 records put before the query")(read.size >= 100)
      putTyped(100 until 150)
      await(query, "150 records")(read.size >= 150)
      assert(read.map(r => (r.getLong(0), r.getString(1))).sorted == (0 until 150).map(i => (i.toLong, s"s${i % 3}")))
    } finally query.stop()
  }

  test("across a stop and a restart from the checkpoint every record is read, and only records after it repeat") {
    val server = kinesisMock
    val stream = freshStream(server, "rtm-restart", 2)
    val checkpoint = Files.createTempDirectory("rtm-restart").toString
    val sink = s"restart-${System.nanoTime()}"
    put(server, stream, records(0, 100))
    val first = start(server, stream, sink, checkpoint)
    try {
      await(first, "the first 100 records")(Collected.rows(sink).size >= 100)
      await(first, "a batch committed")(committed(checkpoint).isDefined)
      put(server, stream, records(100, 150))
      await(first, "150 records")(Collected.rows(sink).size >= 150)
    } finally first.stop()
    val checkpointed = committed(checkpoint).get
    val beforeRestart = Collected.rows(sink).size
    put(server, stream, records(150, 200))
    val second = start(server, stream, sink, checkpoint)
    try await(second, "every record after the restart")(Collected.rows(sink).map(_.data).toSet.size >= 200)
    finally second.stop()

    val rows = Collected.rows(sink)
    assert(rows.map(_.data).toSet == (0 until 200).map(i => s"r$i").toSet)
    val again = rows.drop(beforeRestart)
    val covered =
      again.filter(r => !ShardPosition.includes(checkpointed.shards(ShardKey(stream, r.shardId)), r.position))
    assert(covered.isEmpty, s"read again after the restart though the checkpoint had them: ${covered.take(5)}")
    val repeated = rows.groupBy(_.data).collect { case (d, rs) if rs.size > 1 => d }
    assert(repeated.forall(d => again.exists(_.data == d)), "a record repeated within one run")
  }

  /** Every record of `0 until count` once, each key's records in the order they were put, and `shardCount` shards. */
  private def assertReadInOrder(rows: Seq[Got], count: Int, shardCount: Int): Unit = {
    assert(rows.map(_.data).sorted == (0 until count).map(i => s"r$i").sorted, "every record exactly once")
    rows.groupBy(_.key).foreach { case (key, rs) =>
      val order = rs.map(_.data.drop(1).toInt)
      assert(order == order.sorted, s"key $key out of order: $order")
    }
    assert(rows.map(_.shardId).distinct.size == shardCount, s"read from ${rows.map(_.shardId).distinct}")
  }

  private def shardCounts(sink: String): String =
    Collected.rows(sink).groupBy(_.shardId).map(e => e._1 -> e._2.size).toString

  /**
   * A real-time query of a fresh stream of `shardCount` shards on kinesis-mock: 100 records, then `reshard` while it
   * runs, then records up to `total`; every record once, each key in order, from the three shards there are then.
   * `withinBatch`: five-minute batches, and every record read while the first still runs.
   */
  private def readAcrossReshard(
      prefix: String,
      shardCount: Int,
      total: Int,
      withinBatch: Boolean,
      extra: Map[String, String] = Map.empty)(reshard: (LocalKinesisServer, String) => Unit): Unit = {
    val server = kinesisMock
    val stream = freshStream(server, prefix, shardCount)
    val sink = s"$prefix-${System.nanoTime()}"
    put(server, stream, records(0, 100))
    val query = start(server, stream, sink, Files.createTempDirectory(prefix).toString,
      if (withinBatch) Trigger.RealTime("5 minutes") else trigger, extra)
    try {
      await(query, "the first 100 records")(Collected.rows(sink).size >= 100)
      reshard(server, stream)
      put(server, stream, records(100, total))
      await(query, s"$total records (read ${shardCounts(sink)}; last progress ${query.lastProgress})")(
        Collected.rows(sink).size >= total)
      // The first batch runs for five minutes: the new shards were read in it, not planned by a later batch.
      if (withinBatch) assert(query.recentProgress.isEmpty, "a batch ended before the new shards' records were read")
    } finally query.stop()
    assertReadInOrder(Collected.rows(sink), total, 3)
  }

  test("more shards than task slots: the shards share the slots' tasks and every shard is read in every batch") {
    // local[2] has two task slots. A real-time task that gets its slot only when another ends (after the batch's
    // time) is ended by Spark before it reads: five one-shard tasks would leave three shards unread for good.
    val server = kinesisMock
    val stream = freshStream(server, "rtm-slots", 5)
    val sink = s"slots-${System.nanoTime()}"
    put(server, stream, records(0, 200))
    val query = start(server, stream, sink, Files.createTempDirectory("rtm-slots").toString)
    try {
      await(query, s"the 200 records (read ${shardCounts(sink)})")(Collected.rows(sink).size >= 200)
      put(server, stream, records(200, 300))
      await(query, s"300 records (read ${shardCounts(sink)})")(Collected.rows(sink).size >= 300)
    } finally query.stop()
    assertReadInOrder(Collected.rows(sink), 300, 5)
  }

  private def mergeFirstTwo(server: LocalKinesisServer, stream: String): Unit = {
    val ids = shards(server, stream).map(_.shardId()).sorted
    merge(server, stream, ids(0), ids(1))
  }

  test("a split during a batch: the task goes on into both children within the batch, per-key order kept") {
    readAcrossReshard("rtm-split", 1, 300, withinBatch = true) { (server, stream) =>
      split(server, stream, shards(server, stream).head.shardId())
    }
  }

  test("a merge of two shards one task reads (shardsPerTask=2): the merged shard is read within the batch") {
    readAcrossReshard("rtm-merge-one", 2, 200, withinBatch = true, Map("shardsPerTask" -> "2"))(mergeFirstTwo)
  }

  test("a merge of two shards two tasks read: the merged shard is read from a later batch, per-key order kept") {
    readAcrossReshard("rtm-merge-two", 2, 200, withinBatch = false)(mergeFirstTwo)
  }

  /**
   * The real-time cells of the resharding matrix (docs/testing.md): a stream resharded before the query (a split, a
   * merge and UpdateShardCount, [[Resharding.reshard]]) or while it runs (a split and a merge), read by GetRecords
   * or by enhanced fan-out (`efo+end`: through the service's shard-end events, which kinesis-mock does not send);
   * every record once, each key in order. Two tasks at most (`shardsPerTask=2`): local[2] has two task slots.
   */
  private def reshardCell(mode: String, before: Boolean): Unit = {
    val server = kinesisMock
    val stream = freshStream(server, s"rtm-matrix-${mode.take(3)}", 2)
    val sink = s"matrix-${System.nanoTime()}"
    val parts = Seq(0 until 100, 100 until 200, 200 until 300, 300 until 400)
    val total = if (before) 400 else 300
    put(server, stream, Resharding.records(0, 100))
    if (before) Resharding.reshard(server, stream, parts, updateShardCount = true)
    val extra = Map("shardsPerTask" -> "2") ++
      (if (mode == "polling") Map.empty else Map("consumerMode" -> "efo", "requireConsumerDeregistration" -> "true"))
    def run(): Unit = {
      // Fan-out: ten-second batches, so that each task's subscriptions serve a while before the next batch opens
      // new ones (kinesis-mock holds a cancelled subscription's shard for a while).
      val batches = if (mode == "polling") trigger else Trigger.RealTime("10 seconds")
      val query = start(server, stream, sink, Files.createTempDirectory("rtm-matrix").toString, batches, extra)
      try {
        if (!before) {
          await(query, "the first 100 records")(Collected.rows(sink).size >= 100)
          Resharding.reshard(server, stream, parts, updateShardCount = false)
        }
        await(query, s"$total records (read ${shardCounts(sink)}; last progress ${query.lastProgress})")(
          Collected.rows(sink).size >= total)
      } finally query.stop()
    }
    if (mode != "efo+end") run()
    else
      FaultySubscriptions.through(new FaultySubscriptions(SubscriptionSource.of(connection(server)),
          syncClient(server), stream, signalShardEnd = true))(run())
    val rows = Collected.rows(sink).map(g => (0L, g.data, g.key, g.shardId))
    val found = Resharding.problems(rows, 0 until total, Resharding.parents(server, stream), childrenLater = false)
    assert(found.isEmpty, found.mkString("\n"))
  }

  for (mode <- Seq("polling", "efo")) {
    test(s"real-time, $mode: a stream resharded before the query is read whole, each key in order") {
      reshardCell(mode, before = true)
    }
  }

  for (mode <- Seq("efo", "efo+end")) {
    test(s"real-time, $mode: a stream resharded while the query runs is read whole, each key in order") {
      reshardCell(mode, before = false)
    }
  }

  test("a Kinesis-to-Kinesis pipeline passes each record on within the batch (maxRecordDelay), every record once") {
    val server = kinesisMock
    val input = freshStream(server, "rtm-k2k-in", 2)
    val output = freshStream(server, "rtm-k2k-out", 1)
    put(server, input, records(0, 100))
    // The Kinesis sink is not in Spark's real-time allowlist: the check is turned off for this query.
    val query = withoutAllowlistCheck(source(server, input)
        .selectExpr("upper(CAST(data AS STRING)) AS data", "partitionKey")
        .writeStream.format("kinesis").options(options(server, output) + ("maxRecordDelay" -> "10ms"))
        .option("checkpointLocation", Files.createTempDirectory("rtm-k2k").toString)
        // Spark tracks progress asynchronously in real-time mode only for the sinks it knows.
        .option("asyncProgressTrackingEnabled", "false")
        .outputMode("update").trigger(Trigger.RealTime("5 minutes")).start())
    def landed: Seq[String] = readAll(server, output).map(_.text)
    try {
      await(query, "the first 100 records in the output stream")(landed.size >= 100)
      put(server, input, records(100, 150))
      await(query, "150 records in the output stream")(landed.size >= 150)
      // The first batch runs for five minutes: the records were written while it ran, not when it ended.
      assert(query.recentProgress.isEmpty, "a batch ended before the records landed")
    } finally query.stop()
    assert(landed.sorted == (0 until 150).map(i => s"R$i").sorted)
  }

  test("with Spark's progress tracking kept asynchronous for the Kinesis sink, records across batch ends and a " +
    "restart all land") {
    val server = kinesisMock
    val input = freshStream(server, "rtm-async-in", 2)
    val output = freshStream(server, "rtm-async-out", 1)
    val checkpoint = Files.createTempDirectory("rtm-async").toString
    // Spark writes its offset and commit logs beside the batches, not between them, only for the sinks it knows;
    // this internal option of Spark's lifts that check (docs/source.md, "Sinks").
    def run(): StreamingQuery = withoutAllowlistCheck(source(server, input)
        .selectExpr("CAST(data AS STRING) AS data", "partitionKey")
        .writeStream.format("kinesis").options(options(server, output) + ("maxRecordDelay" -> "10ms"))
        .option("checkpointLocation", checkpoint).option("_asyncProgressTrackingOverrideSinkSupportCheck", "true")
        .outputMode("update").trigger(trigger).start())
    def landed: Set[String] = readAll(server, output).map(_.text).toSet
    val first = run()
    try {
      put(server, input, records(0, 100))
      await(first, "two batch ends")(first.recentProgress.length >= 2)
      put(server, input, records(100, 200))
      await(first, "200 records in the output stream")(landed.size >= 200)
      val batches = first.recentProgress.length
      await(first, "another batch end")(first.recentProgress.length > batches)
    } finally first.stop()
    put(server, input, records(200, 300))
    val second = run()
    try await(second, "the records put while the query was stopped")(landed.size >= 300)
    finally second.stop()
    // At least once: every record, none lost across the batch ends or the restart.
    assert(landed == (0 until 300).map(i => s"r$i").toSet)
  }

  test("a real-time query reads by enhanced fan-out, records pushed to its tasks") {
    val server = kinesisMock
    val stream = freshStream(server, "rtm-efo", 2)
    val sink = s"efo-${System.nanoTime()}"
    put(server, stream, records(0, 100))
    val query = source(server, stream, Map("consumerMode" -> "efo", "requireConsumerDeregistration" -> "true"))
      .selectExpr("CAST(data AS STRING) AS data", "partitionKey", "shardId", "sequenceNumber", "subSequenceNumber")
      .writeStream.foreach(new Collected(sink)).option("checkpointLocation",
        Files.createTempDirectory("rtm-efo").toString)
      .outputMode("update").trigger(Trigger.RealTime("5 minutes")).start()
    try {
      await(query, "the first 100 records")(Collected.rows(sink).size >= 100)
      put(server, stream, records(100, 150))
      await(query, "150 records")(Collected.rows(sink).size >= 150)
      // Within the first batch: the records came through the tasks' subscriptions, not at a batch's end.
      assert(query.recentProgress.isEmpty)
    } finally query.stop()
    assert(Collected.rows(sink).map(_.data).sorted == (0 until 150).map(i => s"r$i").sorted)
  }

  test("each batch's progress has the source's metrics from its tasks: calls as running totals, lag and shards") {
    val server = kinesisMock
    val stream = freshStream(server, "rtm-metrics", 2)
    put(server, stream, records(0, 50))
    val query = start(server, stream, s"metrics-${System.nanoTime()}",
      Files.createTempDirectory("rtm-metrics").toString)
    def calls: Seq[Long] = query.recentProgress.toSeq.map(_.sources.head.metrics.get("getRecordsCalls").toLong)
    val gauges =
      try {
        // On a busy machine a batch's tasks may start after its end and make no call: wait for two batches whose
        // tasks made calls (the running total grows twice).
        await(query, "two batches whose tasks made calls")(calls.distinct.count(_ > 0) >= 2)
        QueryMetricsRegistry.stats(query.runId.toString)
      } finally query.stop()
    // What Spark's metrics system and CloudWatch get: every record the tasks handed on, counted at their batch's end.
    val read = gauges.flatMap(_.reads.find(_.stream == stream))
    assert(read.map(r => (r.recordsRead, r.bytesRead)) == Some((50L,
          records(0, 50).map { case (k, d) => k.length + d.length.toLong }.sum)), gauges)
    val progress = query.recentProgress.toSeq.map(_.sources.head.metrics.asScala.toMap)
    val first = progress.find(_("getRecordsCalls").toLong > 0).get
    val second = progress.find(_("getRecordsCalls").toLong > first("getRecordsCalls").toLong).get
    // Two shards polled every 50 ms: calls in each batch whose tasks ran, added up from batch to batch (a running
    // total never goes back, even over a batch whose tasks started too late to make a call).
    assert(calls == calls.sorted, calls)
    assert(first("openShards") == "2" && first("consumerMode") == "polling", first)
    assert(first("throttledCalls") == "0" && first("dataLoss") == "0", first)
    // Caught up by the end of each batch: the tasks' last reads were at the tip.
    assert(second("maxMsBehindLatest").toLong < 60000, second)
  }

  test("options with no meaning in real-time mode are refused by name") {
    val server = kinesisMock
    val stream = freshStream(server, "rtm-options", 1)
    val query = source(server, stream, Map("maxRecordsPerTrigger" -> "100"))
      .writeStream.foreach(new Collected("refused")).outputMode("update").trigger(trigger)
      .option("checkpointLocation", Files.createTempDirectory("rtm-options").toString).start()
    try {
      val failure = intercept[Exception](query.awaitTermination(60000))
      assert(failure.getMessage.contains("[KINESIS_OPTION_NOT_IN_REAL_TIME_MODE]"), failure.getMessage)
      assert(failure.getMessage.contains("'maxRecordsPerTrigger'"), failure.getMessage)
    } finally query.stop()
  }

  /** The source's end offset of the last batch in the checkpoint's commit log. */
  private def committed(checkpoint: String): Option[KinesisSourceOffset] = {
    def ids(dir: Path): Seq[Long] =
      if (!Files.isDirectory(dir)) Nil
      else
        Files.list(dir).iterator().asScala.map(_.getFileName.toString).filter(_.forall(_.isDigit)).map(_.toLong).toSeq
    ids(Paths.get(checkpoint, "commits")).maxOption.map { id =>
      val lines = Files.readAllLines(Paths.get(checkpoint, "offsets", id.toString), StandardCharsets.UTF_8).asScala
      OffsetJson.read(lines.find(_.startsWith("{\"version\":1,\"streams\"")).get)
    }
  }
}

object RealTimeModeSuite {

  final case class Got(data: String, key: String, shardId: String, sequenceNumber: String, sub: Long) {
    def position: RecordPosition = RecordPosition(sequenceNumber, sub, lastInAggregate = true)
  }

  /** Rows a [[Collected]] writer saw, by sink name, in the order its tasks processed them (local mode: one JVM). */
  object Collected {
    private val sinks = new ConcurrentHashMap[String, ConcurrentLinkedQueue[Got]]()
    def queue(name: String): ConcurrentLinkedQueue[Got] =
      sinks.computeIfAbsent(name, _ => new ConcurrentLinkedQueue[Got]())
    def rows(name: String): Seq[Got] = queue(name).asScala.toSeq
  }

  final class Collected(name: String) extends ForeachWriter[Row] {
    override def open(partitionId: Long, epochId: Long): Boolean = true
    override def process(r: Row): Unit =
      Collected.queue(name).add(Got(r.getString(0), r.getString(1), r.getString(2), r.getString(3), r.getLong(4)))
    override def close(errorOrNull: Throwable): Unit = ()
  }
}
