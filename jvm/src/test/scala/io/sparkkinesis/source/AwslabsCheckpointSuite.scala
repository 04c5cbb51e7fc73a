package io.sparkkinesis.source

import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Path}
import java.util.UUID

import io.sparkkinesis.compat.CollectionConverters._

import org.apache.spark.sql.streaming.Trigger
import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.testing.{Integration, LocalKinesisServer, LocalKinesisServers, ReadRecord, SharedSparkSession}
import io.sparkkinesis.testing.TestStreams._

/**
 * A query of the awslabs connector moved to this one: its checkpoint is written here in their format (their offset
 * JSON in Spark's offset log, their shard files beside it, as their offset classes publish them), then this
 * connector's query restarts on it and must read every record after their last committed batch exactly once.
 */
@Integration
class AwslabsCheckpointSuite extends AnyFunSuite with LocalKinesisServers with SharedSparkSession {
  import KinesisStreamingSourceSuite.Collector

  private def server: LocalKinesisServer = kinesalite

  private def write(path: Path, text: String): Unit = {
    Files.createDirectories(path.getParent)
    Files.write(path, text.getBytes(StandardCharsets.UTF_8))
  }

  /** A position object as they write it; `seq` None for TRIM_HORIZON. */
  private def theirPosition(seq: Option[String], quoted: Boolean): String = {
    def v(s: String) = if (quoted) "\"" + s + "\"" else s
    seq match {
      case Some(s) => s""""iteratorType":"AFTER_SEQUENCE_NUMBER","iteratorPosition":"$s","subSequenceNumber":""" +
          s"""${v("-1")},"isLast":${v("true")}"""
      case None => s""""iteratorType":"TRIM_HORIZON","iteratorPosition":"","subSequenceNumber":${v("-1")},""" +
          s""""isLast":${v("true")}"""
    }
  }

  /** Spark's offset-log entry for batch `batch`, with their source offset as its last line. */
  private def offsetEntry(root: Path, batch: Long, stream: String, shards: Map[String, Option[String]]): Unit = {
    val positions = shards.toSeq.sortBy(_._1).map { case (id, seq) => s""""$id":{${theirPosition(seq, true)}}""" }
    write(root.resolve(s"offsets/$batch"),
      "v1\n" + """{"batchWatermarkMs":0,"batchTimestampMs":1700000000000,"conf":{}}""" + "\n" +
        s"""{"metadata":{"streamName":"$stream","batchId":"$batch"},${positions.mkString(",")}}""")
  }

  /** Their task's file: where batch `batch` ended in `shard`. */
  private def shardFile(root: Path, batch: Long, shard: String, seq: String): Unit =
    write(root.resolve(s"sources/0/shard-source/$batch/$shard"),
      s"""{"shardId":"$shard",${theirPosition(Some(seq), false)}}""")

  private def commit(root: Path, batch: Long): Unit =
    write(root.resolve(s"commits/$batch"), "v1\n{\"nextBatchWatermarkMs\":0}")

  private def newCheckpoint(): Path = {
    val root = Files.createTempDirectory("awslabs-checkpoint")
    write(root.resolve("metadata"), s"""{"id":"${UUID.randomUUID()}"}""")
    root
  }

  private def run(stream: String, checkpoint: Path): Seq[(Long, String)] = {
    val sink = new Collector
    val query = spark.readStream.format("kinesis").options(options(server, stream)).load()
      .selectExpr("CAST(data AS STRING) AS data")
      .writeStream.foreachBatch(sink).option("checkpointLocation", checkpoint.toString)
      .trigger(Trigger.AvailableNow()).start()
    assert(query.awaitTermination(600000L), "the query did not end within 10 minutes")
    query.exception.foreach(e => fail(e))
    sink.rows.asScala.toSeq
  }

  test("restarted on an awslabs checkpoint, the query reads every record after their last committed batch once") {
    val stream = freshStream(server, "awslabs-move", 2)
    put(server, stream, (0 until 60).map(i => s"k${i % 13}" -> s"r$i"))
    val byShard: Map[String, Seq[ReadRecord]] = readAll(server, stream).groupBy(_.shardId)
    val Seq(a, b) = byShard.keys.toSeq.sorted
    assert(byShard(a).size > 6 && byShard(b).size > 3, "both shards have records")
    val root = newCheckpoint()
    // Batch 0: both shards from TRIM_HORIZON; it read 3 records of a and 2 of b, and was committed.
    offsetEntry(root, 0, stream, Map(a -> None, b -> None))
    shardFile(root, 0, a, byShard(a)(2).sequenceNumber)
    shardFile(root, 0, b, byShard(b)(1).sequenceNumber)
    commit(root, 0)
    // Batch 1 starts there; its task for a read 3 more and finished, its task for b did not; it was not committed.
    offsetEntry(root, 1, stream, Map(a -> Some(byShard(a)(2).sequenceNumber), b -> Some(byShard(b)(1).sequenceNumber)))
    shardFile(root, 1, a, byShard(a)(5).sequenceNumber)

    val rows = run(stream, root)
    val expected = (byShard(a).drop(3) ++ byShard(b).drop(2)).map(_.text)
    assert(rows.map(_._2).sorted == expected.sorted, "every record after batch 0, once")
    assert(rows.filter(_._1 == 1L).map(_._2).sorted == byShard(a).slice(3, 6).map(_.text).sorted,
      "batch 1 runs again over what its finished task had read")
    val log = new String(Files.readAllBytes(root.resolve("offsets/2")), StandardCharsets.UTF_8)
    assert(log.linesIterator.toSeq.last.startsWith("{\"version\":1"), "from then on the log holds our offsets")

    put(server, stream, (60 until 70).map(i => s"k${i % 13}" -> s"r$i"))
    assert(run(stream, root).map(_._2).sorted == (60 until 70).map(i => s"r$i").sorted, "and goes on from there")
  }

  test("shards split and merged after their last batch are read, parents first, not taken as read") {
    val stream = freshStream(server, "awslabs-reshard", 1)
    val parent = "shardId-000000000000"
    put(server, stream, (0 until 10).map(i => s"k${i % 7}" -> s"p$i"))
    val before = readAll(server, stream)
    val root = newCheckpoint()
    // Their last batch, committed: the one shard from TRIM_HORIZON, 3 records read.
    offsetEntry(root, 0, stream, Map(parent -> None))
    shardFile(root, 0, parent, before(2).sequenceNumber)
    commit(root, 0)
    // Since then (their query no longer running): a split, records in both children, the children merged again,
    // and records in the merged shard. Neither child was ever read by them, and their entry does not name them.
    split(server, stream, parent)
    val children = shards(server, stream).map(_.shardId()).filter(_ != parent)
    put(server, stream, (0 until 20).map(i => s"k${i % 7}" -> s"c$i"))
    merge(server, stream, children(0), children(1))
    put(server, stream, (0 until 10).map(i => s"k${i % 7}" -> s"m$i"))
    awaitClockPastArrivals(server, stream)

    val rows = run(stream, root)
    val expected = before.drop(3).map(_.text) ++ (0 until 20).map(i => s"c$i") ++ (0 until 10).map(i => s"m$i")
    assert(rows.map(_._2).sorted == expected.sorted, "every record after their last batch, once")
    def batches(prefix: String): Seq[Long] = rows.filter(_._2.startsWith(prefix)).map(_._1)
    assert(batches("p").max < batches("c").min, "the children are read after their parent")
    assert(batches("c").max < batches("m").min, "the merged shard is read after both children")
  }

  test("a committed awslabs batch without its shard files fails, naming the checkpoint and the recipe") {
    val stream = freshStream(server, "awslabs-dynamo", 1)
    val root = newCheckpoint()
    offsetEntry(root, 0, stream, Map("shardId-000000000000" -> None))
    commit(root, 0)
    val sink = new Collector
    val query = spark.readStream.format("kinesis").options(options(server, stream)).load()
      .selectExpr("CAST(data AS STRING) AS data")
      .writeStream.foreachBatch(sink).option("checkpointLocation", root.toString)
      .trigger(Trigger.AvailableNow()).start()
    val error = intercept[Exception](query.awaitTermination(600000L))
    val message = Iterator.iterate[Throwable](error)(_.getCause).takeWhile(_ != null).map(_.getMessage)
      .find(m => m != null && m.contains("[KINESIS_FOREIGN_CHECKPOINT]")).getOrElse(fail(error))
    assert(message.contains(s"The checkpoint ${root.toUri.getPath.stripSuffix("/")}") ||
        message.contains(root.toString), message)
    assert(message.contains("shard-source/0") && message.contains("initialShardPositions"), message)
  }
}
