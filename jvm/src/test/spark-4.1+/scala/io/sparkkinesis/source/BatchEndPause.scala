package io.sparkkinesis.source

import java.nio.file.Files
import java.time.Instant
import java.util.concurrent.ConcurrentLinkedQueue

import scala.jdk.CollectionConverters._

import org.apache.spark.scheduler.{SparkListener, SparkListenerJobStart, SparkListenerTaskEnd}
import org.apache.spark.sql.{Encoders, ForeachWriter, Row, SparkSession}
import org.apache.spark.sql.execution.streaming.sources.LowLatencyMemoryStream
import org.apache.spark.sql.streaming.{StreamingQuery, Trigger}
import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.services.kinesis.model.{
  GetRecordsRequest,
  GetShardIteratorRequest,
  PutRecordsRequest,
  PutRecordsRequestEntry,
  ShardIteratorType
}

import io.sparkkinesis.testing.LocalKinesisServer
import io.sparkkinesis.testing.TestStreams._

/**
 * Benchmark (not a test, not part of CI; `make bench-batch-ends` runs it): how long a real-time pipeline stops at a
 * batch end, and whose the pause is. One pipeline per run, in `local[2]` with `trigger(realTime=...)`, records
 * added at `rate` a second for `seconds`, each record's latency taken where it leaves the pipeline:
 *
 *  - `spark`: Spark's own test source for real-time mode (`LowLatencyMemoryStream`, records added on the driver)
 *    into the `foreach` sink: no connector code at all. Latency: the foreach call minus the add. Two partitions,
 *    one task per slot (a partition without a slot would not be read; the connector's 4 shards make 2 tasks too).
 *  - `source`: this connector's source (kinesalite, 4 shards, `minFetchPeriod` 50 ms) into the `foreach` sink.
 *    Latency: the foreach call minus the record's ApproximateArrivalTimestamp. The stream is new and read from its
 *    trim horizon: `latest` is pinned as AT_TIMESTAMP, which kinesalite answers only after the client's socket
 *    timeout on a shard with no record after that time (docs/testing.md).
 *  - `sink`: Spark's test source into this connector's sink (`maxRecordDelay` 10 ms, kinesalite). Latency: the
 *    record's ApproximateArrivalTimestamp in the output stream minus the add (read back after the run).
 *
 * The whole Kinesis-to-Kinesis pipeline is `bench/realtime/run.py --modes real-time --batch-duration ...`. Printed:
 * p50, p99, p99.9 and max over all records, the max and count over 100 ms within a second of each batch end
 * (its progress's trigger time plus its duration), Spark's gap between one batch's tasks and the next's, and the
 * progress's durations of each batch. In local mode the
 * foreach sink and the driver share a JVM, so latencies are collected in this JVM's memory: fine for a benchmark.
 *
 * Arguments: pipeline, records a second, seconds, batch seconds, and for `sink` the progress tracking (`sync`,
 * the default, or `async`).
 *
 *   SPARK_JARS_DIR=... bin/sbt 'connector/Test/runMain io.sparkkinesis.source.BatchEndPause spark 600 50 20'
 */
object BatchEndPause {

  def main(args: Array[String]): Unit = {
    val status =
      try { run(args); 0 }
      catch { case e: Throwable => e.printStackTrace(); 1 }
    sys.exit(status) // threads of the SDK and Spark would keep the JVM alive
  }

  /** (epoch millis the record left the pipeline, its latency in ms), from every task of this JVM. */
  private val seen = new ConcurrentLinkedQueue[(Long, Long)]()

  private def run(args: Array[String]): Unit = {
    val pipeline = args.lift(0).getOrElse("spark")
    val rate = args.lift(1).map(_.toInt).getOrElse(600)
    val seconds = args.lift(2).map(_.toInt).getOrElse(50)
    val batch = s"${args.lift(3).map(_.toInt).getOrElse(20)} seconds"
    require(Set("spark", "source", "sink")(pipeline), s"pipeline '$pipeline': spark, source or sink")
    // How the sink pipeline tracks progress: `sync` turns Spark's asynchronous progress tracking off (the offset and
    // commit logs written between batches), `async` keeps it, as Spark does for its own sinks in real-time mode.
    val progressTracking = args.lift(4).getOrElse("sync") match {
      case "sync" => Map("asyncProgressTrackingEnabled" -> "false")
      case "async" => Map("_asyncProgressTrackingOverrideSinkSupportCheck" -> "true")
      case other => throw new IllegalArgumentException(s"progress tracking '$other': sync or async")
    }
    val server = if (pipeline == "spark") None else Some(LocalKinesisServer.start(LocalKinesisServer.Kinesalite))
    val spark = SparkSession.builder().master("local[2]").appName(s"BatchEndPause-$pipeline")
      .config("spark.ui.enabled", "false").config("spark.driver.host", "127.0.0.1")
      .config("spark.driver.bindAddress", "127.0.0.1").config("spark.sql.shuffle.partitions", "2")
      .config("spark.sql.streaming.realTimeMode.allowlistCheck", "false") // lets the Kinesis sink through
      .getOrCreate()
    val timeline = new Timeline
    spark.sparkContext.addSparkListener(timeline)
    val checkpoint = Files.createTempDirectory("batch-end-pause").toString
    try {
      val stream = server.map(s => freshStream(s, s"pause-$pipeline", 4))
      val memory = if (pipeline == "source") None else Some(LowLatencyMemoryStream[Long](spark, 2)(Encoders.scalaLong))
      val query = (pipeline, memory, server, stream) match {
        case ("spark", Some(m), _, _) =>
          m.toDF().writeStream.foreach(new Latencies).option("checkpointLocation", checkpoint)
            .outputMode("update").trigger(Trigger.RealTime(batch)).start()
        case ("source", _, Some(s), Some(name)) =>
          spark.readStream.format("kinesis")
            .options(options(s, name) ++ Map("initialPosition" -> "trim_horizon", "minFetchPeriod" -> "50ms")).load()
            .selectExpr("CAST(unix_millis(approximateArrivalTimestamp) AS LONG) AS value")
            .writeStream.foreach(new Latencies).option("checkpointLocation", checkpoint)
            .outputMode("update").trigger(Trigger.RealTime(batch)).start()
        case (_, Some(m), Some(s), Some(name)) =>
          m.toDF().selectExpr("CAST(value AS STRING) AS data", "CAST(value % 16 AS STRING) AS partitionKey")
            .writeStream.format("kinesis").options(options(s, name) ++ Map("maxRecordDelay" -> "10ms"))
            .option("checkpointLocation", checkpoint).options(progressTracking)
            .outputMode("update").trigger(Trigger.RealTime(batch)).start()
        case _ => throw new IllegalStateException(pipeline)
      }
      try {
        awaitRunning(query)
        val started = System.currentTimeMillis()
        // Records in steps of 10 ms, each step's share of the rate, until `seconds` have passed.
        var added = 0L
        while (System.currentTimeMillis() - started < seconds * 1000L) {
          query.exception.foreach(e => throw e)
          val due = (System.currentTimeMillis() - started) * rate / 1000 - added
          if (due > 0) {
            val now = System.currentTimeMillis()
            (memory, server, stream) match {
              case (Some(m), _, _) => m.addData(Seq.fill(due.toInt)(now))
              case (None, Some(s), Some(name)) => putNow(s, name, due.toInt, added)
              case _ =>
            }
            added += due
          }
          Thread.sleep(10)
        }
        val deadline = System.currentTimeMillis() + 60000
        def collected = if (pipeline == "sink") outputLatencies(server.get, stream.get) else seen.asScala.toSeq
        while (collected.size < added && System.currentTimeMillis() < deadline) {
          query.exception.foreach(e => throw e)
          Thread.sleep(500)
        }
        val latencies = collected
        // A batch's progress comes when it ends: its trigger time plus its duration is that end.
        val ends = query.recentProgress.toSeq.map(p =>
          Instant.parse(p.timestamp).toEpochMilli + p.durationMs.get("triggerExecution").longValue)
        report(pipeline, batch, added, latencies, ends)
        timeline.report(pipeline)
        query.recentProgress.foreach(p =>
          println(s"PAUSE $pipeline progress batch ${p.batchId} at ${p.timestamp}: ${p.durationMs.asScala.toSeq
              .sortBy(_._1).map { case (k, v) => s"$k=$v" }.mkString(" ")}"))
      } finally query.stop()
    } finally {
      spark.stop()
      server.foreach(_.stop())
    }
  }

  private def awaitRunning(query: StreamingQuery): Unit = {
    val deadline = System.currentTimeMillis() + 120000
    while (!query.status.isTriggerActive && System.currentTimeMillis() < deadline) {
      query.exception.foreach(e => throw e)
      Thread.sleep(20)
    }
    Thread.sleep(2000) // the first tasks started and reading: records added before would wait for them
  }

  /** Puts `count` records whose data is their put time in millis (the sink pipeline's output holds the same). */
  private def putNow(server: LocalKinesisServer, stream: String, count: Int, from: Long): Unit = {
    val now = System.currentTimeMillis().toString
    put(server, stream, (0 until count).map(i => s"k${(from + i) % 16}" -> now))
  }

  /** Every record of the output stream: (its arrival, its arrival minus the add time its data holds). */
  private def outputLatencies(server: LocalKinesisServer, stream: String): Seq[(Long, Long)] =
    readAll(server, stream).map(r => r.arrivalMillis -> (r.arrivalMillis - r.text.toLong))

  private def report(pipeline: String, batch: String, added: Long, l: Seq[(Long, Long)], ends: Seq[Long]): Unit = {
    val sorted = l.map(_._2).sorted.toIndexedSeq
    def pct(p: Double) = if (sorted.isEmpty) -1L else sorted(math.min(sorted.size - 1, (p * sorted.size).toInt))
    println(s"PAUSE $pipeline batch=$batch added=$added arrived=${l.size} p50=${pct(0.5)} p99=${pct(0.99)} " +
      s"p99.9=${pct(0.999)} max=${sorted.lastOption.getOrElse(-1L)} over100=${sorted.count(_ > 100)}")
    val far = l.filter { case (at, _) => ends.forall(e => math.abs(at - e) > 2000) }.map(_._2)
    println(s"PAUSE $pipeline more than 2 s from a batch end: ${far.size} records, max ${far.maxOption.getOrElse(-1L)}")
    ends.zipWithIndex.foreach { case (e, i) =>
      val near = l.filter { case (at, _) => math.abs(at - e) <= 1000 }.map(_._2)
      println(s"PAUSE $pipeline end of batch $i (${Instant.ofEpochMilli(e)}): ${near.size} records within 1 s, " +
        s"max ${near.maxOption.getOrElse(-1L)}, over 100 ms ${near.count(_ > 100)}")
    }
  }

  /**
   * When each job's tasks ran (a real-time batch is one job): from the last task of one batch ending to the first
   * task of the next starting is the scheduler's share of the pause.
   */
  final class Timeline extends SparkListener {
    private val jobs = new ConcurrentLinkedQueue[(Int, Long, Seq[Int])]() // job, submitted, stages
    private val tasks = new ConcurrentLinkedQueue[(Int, Long, Long, Long)]() // stage, launched, finished, run time

    override def onJobStart(e: SparkListenerJobStart): Unit = jobs.add((e.jobId, e.time, e.stageIds))
    override def onTaskEnd(e: SparkListenerTaskEnd): Unit =
      tasks.add((e.stageId, e.taskInfo.launchTime, e.taskInfo.finishTime,
          Option(e.taskMetrics).map(_.executorRunTime).getOrElse(-1L)))

    def report(pipeline: String): Unit = {
      val byJob = jobs.asScala.toSeq.sortBy(_._1).map { case (job, submitted, stages) =>
        (job, submitted, tasks.asScala.toSeq.filter(t => stages.contains(t._1)))
      }.filter(_._3.nonEmpty)
      byJob.zip(byJob.drop(1)).foreach { case ((job, _, ended), (next, submitted, started)) =>
        val lastEnd = ended.map(_._3).max
        println(s"PAUSE $pipeline job $job -> $next: tasks ended over ${lastEnd - ended.map(_._3).min} ms " +
          s"(launched ${ended.map(_._2).min}, ran ${ended.map(_._4).mkString("/")} ms); next job submitted " +
          s"+${submitted - lastEnd} ms, its tasks launched +${started.map(_._2).min - lastEnd}.." +
          s"+${started.map(_._2).max - lastEnd} ms after the last task ended")
      }
    }
  }

  /** Records each row's latency: now minus its `value` (epoch millis). */
  final class Latencies extends ForeachWriter[Row] {
    override def open(partitionId: Long, epochId: Long): Boolean = true
    override def process(r: Row): Unit = {
      val now = System.currentTimeMillis()
      seen.add(now -> (now - r.getLong(0)))
    }
    override def close(errorOrNull: Throwable): Unit = ()
  }
}
