package io.sparkkinesis.bench

import java.io.File
import java.nio.file.Files

import scala.sys.process._

import io.sparkkinesis.compat.ScalaCompat._
import scala.util.control.NonFatal

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.streaming.Trigger

/**
 * What the connector costs the driver at thousands of shards (docs/performance.md, "Scale"). For each shard count,
 * a stream of that many shards holding `records` records of `bytes` bytes in each, and one query on a fresh
 * checkpoint: Trigger.AvailableNow into the noop sink, on a local[2] session. Per run it records Spark's progress
 * durations (latestOffset, queryPlanning, walCommit, addBatch, commitOffsets, triggerExecution, summed over the
 * batches), the tasks of the prefetch rounds and of the batches, the offset log's size, the heap after GC (before
 * the query, the most after any batch, and after it ended), records/s and wall time. Results go to
 * `<out>/<server>.json` and `.csv`, rewritten after every run; `bench/scale/plot.py` draws them.
 *
 *   make bench-scale ARGS="--server fake --shards 100,500,1000"
 *
 * Options: `--server fake,kinesalite` (default both), `--shards N,N,...` (default 100 to 10,000 on the fake, to 2,000
 * on kinesalite, whose shard limit that is), `--records 20`, `--bytes 100`, `--out build/bench/scale`,
 * `--timeout-minutes 20` (per run), `--option key=value` (a source option, repeatable).
 */
object ScaleBench {
  private val DefaultShards = Map("fake" -> Seq(100, 500, 1000, 2000, 5000, 10000),
    "kinesalite" -> Seq(100, 500, 1000, 2000))

  final case class Settings(
      servers: Seq[String] = Seq("fake", "kinesalite"),
      shards: Option[Seq[Int]] = None,
      records: Int = 20,
      bytes: Int = 100,
      out: String = "build/bench/scale",
      timeoutMinutes: Int = 20,
      options: Map[String, String] = Map.empty)

  def parse(args: List[String], s: Settings = Settings()): Settings = args match {
    case Nil => s
    case "--server" :: v :: rest => parse(rest, s.copy(servers = v.split(',').toSeq.map(_.trim)))
    case "--shards" :: v :: rest => parse(rest, s.copy(shards = Some(v.split(',').toSeq.map(_.trim.toInt))))
    case "--records" :: v :: rest => parse(rest, s.copy(records = v.toInt))
    case "--bytes" :: v :: rest => parse(rest, s.copy(bytes = v.toInt))
    case "--out" :: v :: rest => parse(rest, s.copy(out = v))
    case "--timeout-minutes" :: v :: rest => parse(rest, s.copy(timeoutMinutes = v.toInt))
    case "--option" :: kv :: rest =>
      val Array(k, v) = kv.split("=", 2)
      parse(rest, s.copy(options = s.options + (k -> v)))
    case other :: _ => sys.error(s"ScaleBench: unknown argument $other (see the Scaladoc of ScaleBench)")
  }

  def main(args: Array[String]): Unit = {
    val settings = parse(args.toList)
    val commit = scala.util.Try("git rev-parse --short HEAD".!!.trim).getOrElse("unknown") +
      scala.util.Try(if ("git status --porcelain --untracked-files=no".!!.trim.nonEmpty) "-dirty" else "").getOrElse("")
    val spark = SparkSession.builder().master("local[2]").appName("ScaleBench")
      .config("spark.ui.enabled", "false")
      .config("spark.driver.host", "127.0.0.1")
      .config("spark.driver.bindAddress", "127.0.0.1")
      .config("spark.sql.shuffle.partitions", "2")
      .getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    try settings.servers.foreach { serverName =>
        val server: ScaleServer = serverName match {
          case "fake" => new FakeScaleServer
          case "kinesalite" => new KinesaliteScaleServer
          case other => sys.error(s"ScaleBench: unknown server $other (fake or kinesalite)")
        }
        val results = new ScaleResults(new File(settings.out), serverName, commit)
        // A first, unrecorded run loads the classes and warms the JIT, which the first recorded one would pay for.
        if (serverName == "fake") runOne(spark, server, 100, settings)
        settings.shards.getOrElse(DefaultShards(serverName)).foreach { shards =>
          val row = runOne(spark, server, shards, settings)
          results.add(row)
          println(s"ScaleBench $serverName ${row.map { case (k, v) => s"$k=$v" }.mkString(" ")}")
        }
        println(s"ScaleBench: results in ${results.jsonFile}")
      }
    finally spark.stop()
  }

  /** One query on a fresh stream of `shards` shards; the row of results. */
  def runOne(spark: SparkSession, server: ScaleServer, shards: Int, s: Settings): Seq[(String, Any)] = {
    val stream = s"scale-$shards-${System.nanoTime()}"
    val expected = shards.toLong * s.records
    val setupStart = System.nanoTime()
    val options =
      try server.prepare(stream, shards, s.records, s.bytes)
      catch {
        case NonFatal(e) =>
          server.release(stream)
          return Seq("server" -> server.name, "shards" -> shards, "error" -> s"setup: $e")
      }
    val setupSeconds = (System.nanoTime() - setupStart) / 1e9
    val heapBefore = ScaleProbe.heapAfterGc()
    val probe = new ScaleProbe
    spark.sparkContext.addSparkListener(probe)
    spark.streams.addListener(probe.queryListener)
    val checkpoint = Files.createTempDirectory("scale-bench-checkpoint").toFile
    val callsBefore = server.calls
    val start = System.nanoTime()
    var error = ""
    val query = spark.readStream.format("kinesis")
      .options(options ++ Map("streamName" -> stream, "initialPosition" -> "trim_horizon") ++ s.options).load()
      .writeStream.format("noop").trigger(Trigger.AvailableNow())
      .option("checkpointLocation", checkpoint.getPath).start()
    try {
      if (!query.awaitTermination(s.timeoutMinutes * 60L * 1000)) {
        error = s"not done in ${s.timeoutMinutes} minutes"
        query.stop()
      }
    } catch { case NonFatal(e) => error = e.getMessage.linesIterator.take(1).mkString }
    val wallSeconds = (System.nanoTime() - start) / 1e9
    probe.settle(30000)
    val heapAfter = ScaleProbe.heapAfterGc()
    spark.streams.removeListener(probe.queryListener)
    spark.sparkContext.removeSparkListener(probe)
    val calls = server.calls.map { case (op, n) => op -> (n - callsBefore.getOrElse(op, 0L)) }
    server.release(stream)

    val offsets = Option(new File(checkpoint, "offsets").listFiles()).toSeq.flatten.filter(_.getName.forall(_.isDigit))
    val batches = probe.progress
    val read = batches.map(_.rows).sum
    def total(key: String) = batches.map(_.durations.getOrElse(key, 0L)).sum
    val jobs = probe.jobTasks
    val (prefetch, batchJobs) = jobs.partition(_.prefetch)
    val heapRun = (batches.map(_.heapAfterGcBytes) :+ heapAfter).max
    val mb = 1024.0 * 1024
    Seq(
      "server" -> server.name,
      "shards" -> shards,
      "records_expected" -> expected,
      "records_read" -> read,
      "setup_s" -> round(setupSeconds),
      "wall_s" -> round(wallSeconds),
      "records_per_s" -> round(read / wallSeconds),
      "batches" -> batches.size,
      "latest_offset_ms" -> total("latestOffset"),
      "latest_offset_max_ms" -> batches.map(_.durations.getOrElse("latestOffset", 0L)).maxOption.getOrElse(0L),
      "query_planning_ms" -> total("queryPlanning"),
      "wal_commit_ms" -> total("walCommit"),
      "add_batch_ms" -> total("addBatch"),
      "commit_offsets_ms" -> total("commitOffsets"),
      "trigger_ms" -> total("triggerExecution"),
      "prefetch_jobs" -> prefetch.size,
      "prefetch_tasks" -> prefetch.map(_.tasks).sum,
      "prefetch_job_ms" -> prefetch.map(_.millis).sum,
      "prefetch_task_deserialize_ms" -> prefetch.map(_.taskDeserializeMillis).sum,
      "prefetch_task_run_ms" -> prefetch.map(_.taskRunMillis).sum,
      "batch_jobs" -> batchJobs.size,
      "batch_tasks" -> batchJobs.map(_.tasks).sum,
      "batch_job_ms" -> batchJobs.map(_.millis).sum,
      "batch_task_deserialize_ms" -> batchJobs.map(_.taskDeserializeMillis).sum,
      "batch_task_run_ms" -> batchJobs.map(_.taskRunMillis).sum,
      "offset_log_files" -> offsets.size,
      "offset_log_bytes" -> offsets.map(_.length).sum,
      "offset_bytes_per_shard" -> round(offsets.map(_.length).maxOption.getOrElse(0L).toDouble / shards),
      "heap_before_mb" -> round(heapBefore / mb),
      "heap_run_max_mb" -> round(heapRun / mb),
      "heap_after_mb" -> round(heapAfter / mb),
      "heap_per_shard_kb" -> round((heapRun - heapBefore) / 1024.0 / shards),
      "calls_list_shards" -> calls.getOrElse("ListShards", 0L),
      "calls_get_shard_iterator" -> calls.getOrElse("GetShardIterator", 0L),
      "calls_get_records" -> calls.getOrElse("GetRecords", 0L),
      "error" -> (if (error.isEmpty && read != expected) s"read $read of $expected records" else error)
    )
  }

  private def round(d: Double): Double = math.round(d * 100) / 100.0
}
