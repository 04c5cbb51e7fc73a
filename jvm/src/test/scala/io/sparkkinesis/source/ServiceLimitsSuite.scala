package io.sparkkinesis.source

import java.nio.file.Files
import java.util.concurrent.ConcurrentLinkedQueue

import io.sparkkinesis.compat.CollectionConverters._

import org.apache.spark.api.java.function.VoidFunction2
import org.apache.spark.sql.{Dataset, Row}
import org.apache.spark.sql.streaming.Trigger
import org.scalatest.funsuite.AnyFunSuite

import software.amazon.awssdk.services.kinesis.model.SplitShardRequest

import io.sparkkinesis.testing.{FakeKinesis, Integration, ServiceLimits, SharedSparkSession}

/**
 * A query on 10,000 shards under the service's call-rate limits (docs/testing.md, "The in-process fake"): the
 * in-process fake enforces them (ListShards 1,000 a second per stream, its NextToken valid 300 s, GetShardIterator
 * and GetRecords 5 a second per shard, DescribeStreamSummary 20 a second per account) and answers a call over
 * them as the service does. Starting, reading across a reshard and restarting from the checkpoint must keep within
 * them, or retry what was throttled: the query must not fail and must read every record once. The same by enhanced
 * fan-out (SubscribeToShard at most once a second per consumer and shard) on fewer shards. A last test lowers the
 * limits so that every kind of call the polling source makes is throttled, and the query must still read everything.
 */
@Integration
class ServiceLimitsSuite extends AnyFunSuite with SharedSparkSession {

  /** Every record of the fake's stream: (shard, sequence number). */
  private def everything(fake: FakeKinesis, stream: String): Set[(String, String)] =
    fake.stream(stream).shards.flatMap(s => (0L until s.size).map(i => s.id -> s.sequenceNumber(i))).toSet

  /** One AvailableNow query from `checkpoint`; the (shard, sequence number) of every row it delivered. */
  private def drain(options: Map[String, String], checkpoint: String): Seq[(String, String)] = {
    val sink = new ServiceLimitsSuite.Collector
    val query = spark.readStream.format("kinesis").options(options).load()
      .selectExpr("shardId", "sequenceNumber")
      .writeStream.foreachBatch(sink).option("checkpointLocation", checkpoint)
      .trigger(Trigger.AvailableNow()).start()
    try assert(query.awaitTermination(240000L), "the AvailableNow query did not end within 4 minutes")
    finally query.stop()
    query.exception.foreach(e => fail(e))
    sink.rows.asScala.toSeq
  }

  private def split(fake: FakeKinesis, stream: String, count: Int): Unit =
    fake.stream(stream).openShards.take(count).foreach { s =>
      fake.splitShard(SplitShardRequest.builder().streamName(stream).shardToSplit(s.id)
          .newStartingHashKey(((s.hashStart + s.hashEnd + 1) / 2).toString).build())
    }

  /** Start, a reshard with records on both sides of it, and a restart: every record read once. */
  private def startReshardRestart(
      limits: ServiceLimits,
      shards: Int,
      splits: Int,
      extra: Map[String, String] = Map.empty): Unit = {
    val fake = new FakeKinesis(Some(limits))
    val connection = FakeKinesis.serve(fake)
    try {
      val stream = s"limits-${System.nanoTime()}"
      fake.create(stream, shards)
      fake.fill(stream, 2, 16)
      val options = connection ++ Map("streamName" -> stream, "initialPosition" -> "trim_horizon") ++ extra
      val checkpoint = Files.createTempDirectory("kinesis-limits").toString
      val first = drain(options, checkpoint)
      assert(first.size == shards * 2 && first.toSet == everything(fake, stream))

      split(fake, stream, splits)
      fake.fill(stream, 1, 16)
      val second = drain(options, checkpoint)
      val all = first ++ second
      assert(second.size == shards + splits, s"read ${second.size} records after the reshard")
      assert(all.size == all.distinct.size, "records read twice")
      assert(all.toSet == everything(fake, stream))
      info(
        s"calls: ${fake.calls.toSeq.sorted.mkString(", ")}; throttled: ${limits.throttled.toSeq.sorted.mkString(", ")}")
    } finally FakeKinesis.withdraw(connection)
  }

  // About 11 s since a round and a batch have one task per slot (it took 30 to 80 s with 100 shards to a task, and
  // minutes with one, before issue 29; docs/performance.md, "Scale"): default options.
  test("10,000 shards within the service's limits: start, reshard, restart, every record once") {
    startReshardRestart(ServiceLimits(), shards = 10000, splits = 20)
  }

  test("enhanced fan-out on the fake within the service's limits: start, reshard, restart, every record once") {
    val limits = ServiceLimits()
    startReshardRestart(limits, shards = 100, splits = 5, Map("consumerMode" -> "efo"))
  }

  test("every call the source makes throttled at times: the query still reads every record once") {
    // The rates throttle at times, depending on the machine's speed (ListShards went unthrottled once under CI's
    // load); the first calls of each operation are throttled for certain.
    val limits = ServiceLimits(listShardsPerStream = 2, shardIteratorsPerShard = 1, getRecordsPerShard = 2,
      throttleFirst = Map("ListShards" -> 2, "GetShardIterator" -> 2, "GetRecords" -> 2))
    // One record a call, so a shard is read by several calls, closer together than 2 a second.
    startReshardRestart(limits, shards = 20, splits = 2, Map("maxRecordsPerFetch" -> "1"))
    assert(Set("ListShards", "GetShardIterator", "GetRecords").subsetOf(limits.throttled.keySet),
      s"throttled: ${limits.throttled}")
  }
}

object ServiceLimitsSuite {
  final class Collector extends VoidFunction2[Dataset[Row], java.lang.Long] {
    val rows = new ConcurrentLinkedQueue[(String, String)]()
    override def call(batch: Dataset[Row], id: java.lang.Long): Unit =
      batch.collect().foreach(r => rows.add(r.getString(0) -> r.getString(1)))
  }
}
