package io.sparkkinesis.writer

import java.lang.invoke.{MethodHandles, MethodType}
import java.nio.file.Files

import org.apache.spark.SparkEnv
import org.apache.spark.sql.connector.write.LogicalWriteInfo
import org.apache.spark.sql.streaming.Trigger
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap
import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.KinesisTable
import io.sparkkinesis.compat.CollectionConverters._
import io.sparkkinesis.config.Dialect
import io.sparkkinesis.errors.KinesisOptionException
import io.sparkkinesis.metrics.QueryMetricsRegistry
import io.sparkkinesis.testing.{Integration, LocalKinesisServers, SharedSparkSession, TestStreams}
import io.sparkkinesis.testing.TestStreams.readAll

/** `df.write.format("kinesis")` end to end on kinesalite: column routing, keys, metrics, early errors. */
@Integration
class KinesisSinkSparkSuite extends AnyFunSuite with LocalKinesisServers with SharedSparkSession {

  private def server = kinesalite

  private def connectionOptions: Map[String, String] = TestStreams.connectionOptions(server)

  private def freshStream(shards: Int): String = TestStreams.freshStream(server, "spark-sink", shards)

  test("rows are routed by a stream column, without the streamName option") {
    val (a, b) = (freshStream(1), freshStream(2))
    spark.range(300).selectExpr("CAST(id AS STRING) AS data", "CAST(id % 7 AS STRING) AS partitionKey",
      s"IF(id % 3 = 0, '$a', '$b') AS stream")
      .write.format("kinesis").options(connectionOptions).mode("append").save()
    assert(readAll(server, a).map(_.text.toInt).sorted == (0 until 300 by 3))
    assert(readAll(server, b).map(_.text.toInt).sorted == (0 until 300).filter(_ % 3 != 0))
  }

  test("partitionKeyColumn takes the key from an integer column; without a key, keys are random") {
    val stream = freshStream(4)
    spark.range(200).selectExpr("CAST(id AS STRING) AS data", "id AS userId")
      .write.format("kinesis").options(connectionOptions ++ Map("streamName" -> stream,
        "partitionKeyColumn" -> "userId"))
      .mode("append").save()
    assert(readAll(server, stream).forall(r => r.partitionKey == r.text))

    val random = freshStream(4)
    spark.range(400).selectExpr("CAST(id AS STRING) AS data")
      .write.format("kinesis").options(connectionOptions + ("streamName" -> random)).mode("append").save()
    val read = readAll(server, random)
    assert(read.size == 400 && read.map(_.partitionKey).distinct.size == 400)
    assert(read.map(_.shardId).distinct.size == 4, "random keys should spread over every shard")
  }

  test("the sink's custom metrics reach the SQL execution") {
    val stream = freshStream(1)
    spark.range(1000).repartition(2).selectExpr("CAST(id AS STRING) AS data", "'k' AS partitionKey")
      .write.format("kinesis").options(connectionOptions + ("streamName" -> stream)).mode("append").save()
    val store = spark.sharedState.statusStore
    // save() returns when the job ends; Spark's listeners learn of its tasks' metrics a moment later, on their own
    // thread. Once the execution's end is in the store, every task's end (posted before it) is too.
    val deadline = System.nanoTime() + 30L * 1000 * 1000 * 1000
    def last = store.executionsList().maxBy(_.executionId)
    while (last.completionTime.isEmpty) {
      assert(System.nanoTime() < deadline, "the write's SQL execution did not end in the status store within 30 s")
      Thread.sleep(10)
    }
    val execution = last
    val values = store.executionMetrics(execution.executionId)
    val byName = execution.metrics.map(m => m.name -> values.get(m.accumulatorId)).toMap
    assert(byName("Kinesis records written").contains("1000"), byName)
    assert(byName("Kinesis bytes written").contains((0 until 1000).map(_.toString.length + 1).sum.toString))
    assert(byName("Kinesis PutRecords calls").exists(_.toInt >= 2))
    Seq("Kinesis records retried", "Kinesis records throttled", "Kinesis records dropped as oversize")
      .foreach(n => assert(byName(n).contains("0"), n))
  }

  test("a task commits without asking Spark's commit coordinator, batch or streaming: its records are out already") {
    val stream = freshStream(1)
    val info = new LogicalWriteInfo {
      override def queryId(): String = "q"
      override def schema(): StructType =
        spark.range(1).selectExpr("CAST(id AS STRING) AS data", "'k' AS partitionKey").schema
      override def options(): CaseInsensitiveStringMap =
        new CaseInsensitiveStringMap((connectionOptions + ("streamName" -> stream)).asJava)
    }
    val write = new KinesisTable(info.schema()).newWriteBuilder(info).build()
    assert(!write.toBatch.useCommitCoordinator(), "a batch write's tasks ask the coordinator")
    assert(!write.toStreaming.useCommitCoordinator(), "a streaming write's tasks ask the coordinator")
  }

  test("a bad input schema fails when the write starts, listing the expected columns") {
    val e = intercept[KinesisOptionException] {
      spark.range(3).selectExpr("CAST(id AS STRING) AS data", "id AS partitionKey")
        .write.format("kinesis").options(connectionOptions + ("streamName" -> "never-created")).mode("append").save()
    }
    assert(e.getMessage.contains("Column 'partitionKey' (the partition key) has type bigint"))
    assert(e.getMessage.contains(SinkSchema.expected(Dialect.Kinesis)))
  }

  test(
    "columns the sink does not write fail the write, unless unusedColumns=ignore (aws-kinesis's default) drops them") {
    val input = spark.range(50).selectExpr("CAST(id AS STRING) AS data", "CAST(id AS STRING) AS partitionKey",
      "id * 2 AS amount")
    val refused = intercept[KinesisOptionException] {
      input.write.format("kinesis").options(connectionOptions + ("streamName" -> "never-created")).mode("append").save()
    }
    assert(refused.getMessage.contains("Unexpected column(s) amount.") && refused.getMessage.contains("unusedColumns"))

    val ignored = freshStream(1)
    input.write.format("kinesis").options(connectionOptions ++ Map("streamName" -> ignored,
      "unusedColumns" -> "ignore")).mode("append").save()
    assert(readAll(server, ignored).map(r => (r.text, r.partitionKey)).sorted ==
      (0 until 50).map(i => (i.toString, i.toString)).sorted)

    val awslabs = freshStream(1)
    input.write.format("aws-kinesis").options(connectionOptions ++ Map("streamName" -> awslabs,
      "aggregation" -> "none")).mode("append").save()
    assert(readAll(server, awslabs).map(_.text).sorted == (0 until 50).map(_.toString).sorted)
  }

  /** How many sources named `name` the driver's metrics system has (Spark-private: reached as the shim does). */
  private def metricsSources(name: String): Int = {
    val loader = classOf[SparkEnv].getClassLoader
    val system = Class.forName("org.apache.spark.metrics.MetricsSystem", false, loader)
    val lookup = MethodHandles.publicLookup()
    val metricsSystem = lookup.findVirtual(classOf[SparkEnv], "metricsSystem", MethodType.methodType(system))
      .invokeWithArguments(SparkEnv.get)
    // Its return type is Scala's Seq, which is not the same class in Scala 2.12 and 2.13.
    system.getMethod("getSourcesByName", classOf[String]).invoke(metricsSystem, name)
      .asInstanceOf[scala.collection.Seq[_]].size
  }

  private def within(seconds: Int, what: String)(condition: => Boolean): Unit = {
    val deadline = System.nanoTime() + seconds * 1000L * 1000 * 1000
    while (!condition) {
      assert(System.nanoTime() < deadline, s"$what: not within $seconds s")
      Thread.sleep(20)
    }
  }

  test("a streaming write's gauges join Spark's metrics system with its first batch and leave when the query stops") {
    val stream = freshStream(1)
    val name = s"sink-only-${java.util.UUID.randomUUID().toString.take(8)}"
    val query = spark.readStream.format("rate").option("rowsPerSecond", "50").load()
      .selectExpr("CAST(value AS STRING) AS data", "'k' AS partitionKey")
      .writeStream.format("kinesis").options(connectionOptions + ("streamName" -> stream)).queryName(name)
      .option("checkpointLocation", Files.createTempDirectory("sink-metrics").toString)
      .trigger(Trigger.ProcessingTime(200L)).start()
    try {
      within(60, "the query's gauges in the metrics system") {
        QueryMetricsRegistry.running.values.exists(_ == name) && metricsSources(s"kinesis.$name") == 1
      }
    } finally query.stop()
    // No Kinesis source here: the query's termination event, heard on the listener bus, removes them.
    within(30, "the stopped query's gauges gone") {
      !QueryMetricsRegistry.running.values.exists(_ == name) && metricsSources(s"kinesis.$name") == 0
    }
  }
}
