package io.sparkkinesis.writer

import java.util.concurrent.TimeUnit

import org.apache.spark.sql.streaming.StreamingQuery
import org.scalatest.Assertions

import io.sparkkinesis.testing.{KclStyleReader, LocalKinesisServer, Resharding, UserRecordRead}
import io.sparkkinesis.testing.TestStreams._

/**
 * Issue 35: a query copies an input stream into a one-shard output stream with `aggregation=kpl` and
 * `ordering=perKey` while the output is split and then merged back. Read back as the KCL reads
 * ([[KclStyleReader]]: de-aggregated, user records outside their shard's hash range dropped, parents first), every
 * row must have a copy, and each key's copies must come in write order. Rows are `(k<i % Keys>, "<i>")`: per key
 * the ids must increase. The micro-batch and real-time suites start the query with [[OutputColumns]]; this runs the
 * rest.
 */
object KplReshardScenario extends Assertions {
  val Keys = 40
  val Rows = 1500

  /** The sink options under test. */
  val SinkOptions: Map[String, String] = Map("aggregation" -> "kpl", "ordering" -> "perKey")

  /**
   * The query's output: the input's data, and its key prefixed, so that the output's keys do not hash the way the
   * input's do (the input's two shards split the hash range where the output is split: a task reading one input
   * shard would then only write keys of one child, and no aggregate could hold keys of both).
   */
  val OutputColumns: Seq[String] = Seq("CAST(data AS STRING) AS data", "concat('out-', partitionKey) AS partitionKey")

  def records(from: Int, until: Int): Seq[(String, String)] = (from until until).map(i => s"k${i % Keys}" -> s"$i")

  /**
   * Makes an input stream of two shards and an output stream of one, starts `start(input, output)`, and while it
   * runs: puts rows, splits the output's shard with rows being written, puts more, merges the two children with rows
   * being written, puts more; then stops the query and checks the output as a range-filtering consumer reads it.
   */
  def run(server: LocalKinesisServer, prefix: String)(start: (String, String) => StreamingQuery): Unit = {
    val input = freshStream(server, s"$prefix-in", 2)
    val output = freshStream(server, s"$prefix-out", 1)
    val query = start(input, output)
    try {
      put(server, input, records(0, 300))
      awaitCopies(query, server, output, 300)
      put(server, input, records(300, 600))
      split(server, output, Resharding.openShards(server, output).head)
      put(server, input, records(600, 900))
      awaitCopies(query, server, output, 900)
      put(server, input, records(900, 1200))
      val children = Resharding.openShards(server, output)
      assert(children.size == 2, s"the split left open shards $children")
      val byRange = shards(server, output).filter(s => children.contains(s.shardId()))
        .sortBy(s => BigInt(s.hashKeyRange().startingHashKey())).map(_.shardId())
      merge(server, output, byRange(0), byRange(1))
      put(server, input, records(1200, Rows))
      awaitCopies(query, server, output, Rows)
    } finally query.stop()
    val read = KclStyleReader.read(server, output)
    val problems = KplReshardScenario.problems(read, Rows)
    assert(problems.isEmpty, problems.mkString("; "))
  }

  /**
   * What a range-filtering consumer got wrong of ids 0 until `rows`: ids with no copy it keeps, and keys whose copies
   * it sees out of write order. Empty when nothing.
   */
  def problems(read: Seq[UserRecordRead], rows: Int): Seq[String] = {
    val ids = read.map(_.text.toInt)
    val missing = (0 until rows).toSet -- ids
    val disorder = read.groupBy(_.partitionKey).toSeq.sortBy(_._1).collect {
      case (key, rs) if rs.map(_.text.toInt) != rs.map(_.text.toInt).sorted =>
        val seq = rs.map(_.text.toInt)
        val at = seq.indices.find(i => i > 0 && seq(i) < seq(i - 1)).get
        s"$key: ${seq.slice(math.max(0, at - 2), at + 2).mkString(",")}"
    }
    Seq(
      if (missing.isEmpty) None
      else Some(s"${missing.size} of $rows rows have no copy a range-filtering consumer keeps, e.g. " +
        missing.toSeq.sorted.take(8).mkString(",")),
      if (disorder.isEmpty) None
      else Some(s"${disorder.size} keys out of write order for a range-filtering consumer: " +
        disorder.take(3).mkString("; "))).flatten
  }

  /** Waits until every id below `rows` has a copy in `stream`, wherever it landed. */
  private def awaitCopies(query: StreamingQuery, server: LocalKinesisServer, stream: String, rows: Int): Unit = {
    val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120)
    def landed: Int = KclStyleReader.allCopies(server, stream).map(_.text.toInt).filter(_ < rows).distinct.size
    while (landed < rows) {
      query.exception.foreach(e => fail(e))
      assert(System.nanoTime() < deadline, s"rows 0 to ${rows - 1} did not all land in $stream within 120 s")
      Thread.sleep(200)
    }
  }
}
