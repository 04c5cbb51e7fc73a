package io.sparkkinesis.source

import java.util.UUID
import java.util.concurrent.ConcurrentLinkedQueue

import io.sparkkinesis.compat.CollectionConverters._

import org.apache.spark.TaskContext
import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.aws.StreamRef
import io.sparkkinesis.fetching.FetchSettings
import io.sparkkinesis.offsets.{RecordPosition, ShardKey, ShardPosition, StartPosition}
import io.sparkkinesis.reader.{FetchTaskSpec, ShardCut, ShardFetchRequest, ShardSessions}
import io.sparkkinesis.testing.{Integration, LocalKinesisServer, LocalKinesisServers, SharedSparkSession}
import io.sparkkinesis.testing.TestStreams._

/**
 * A retried prefetch attempt starts no second read-ahead (issue 12.6): a real prefetch round ([[FetchRDD]]) on
 * kinesalite whose first attempt fails after its read-ahead has run, so Spark runs the task again (attempt 1,
 * `local[2,2]` allows one retry). Only the first attempt may start a read-ahead loop on the shard's buffer; the
 * retried one cuts the same end from what is buffered and starts none.
 */
@Integration
class FetchRDDRetrySuite extends AnyFunSuite with LocalKinesisServers with SharedSparkSession {
  import FetchRDDRetrySuite._

  override protected def master: String = "local[2,2]"

  private def server: LocalKinesisServer = kinesalite

  test("a retried prefetch attempt starts no read-ahead: the first attempt's loop is the only one") {
    val stream = freshStream(server, "prefetch-retry", 1)
    put(server, stream, (0 until 1000).map(i => "k" -> s"r$i"))
    val written = readAll(server, stream)
    assert(written.size == 1000)
    val key = ShardKey(stream, written.head.shardId)
    val sourceId = s"retry-${UUID.randomUUID()}"
    // Pages of 100 records; the round's budget is one page, and read-ahead goes on to five pages (500 records).
    val request = ShardFetchRequest(key, StreamRef(stream, None, None),
      ShardPosition.NotStarted(StartPosition.TrimHorizon), maxRecords = 100, maxBytes = Long.MaxValue)
    val spec = FetchTaskSpec(sourceId, Seq(request), connection(server),
      FetchSettings(maxRecordsPerCall = 100, minPeriodMillis = 200L), cutoffMillis = None, location = None)
    val sc = spark.sparkContext
    attempts.clear()
    try {
      val failingFirst = new FetchRDD(sc, Seq(spec)).mapPartitions { reports =>
        val round = reports.toVector // the prefetch round itself runs here, in this attempt
        val attempt = TaskContext.get().attemptNumber()
        attempts.add(attempt)
        if (attempt == 0) {
          // Let the first attempt's read-ahead run to its end (five pages buffered) before the attempt fails, so
          // a second loop could start on the buffer if the retried attempt asked for one.
          val buffer = ShardSessions.shared.buffer(sourceId, key).getOrElse(sys.error("no buffer after the round"))
          val deadline = System.nanoTime() + 30L * 1000 * 1000 * 1000
          while (buffer.readingAheadNow || buffer.readAheadStarts == 0) {
            if (System.nanoTime() > deadline) sys.error(s"read-ahead did not end within 30 s: ${buffer.buffered}")
            Thread.sleep(20)
          }
          throw new IllegalStateException("the first attempt fails on purpose")
        }
        round.iterator
      }
      val reports = sc.runJob(failingFirst, (it: Iterator[ShardCut]) => it.toArray).toSeq.flatten

      assert(attempts.asScala.toSeq == Seq(0, 1), "the round ran twice: the first attempt and one retry")
      val buffer = ShardSessions.shared.buffer(sourceId, key).get
      assert(buffer.buffered == 500, "the first attempt's read-ahead read five pages")
      assert(buffer.readAheadStarts == 1, "the retried attempt started a read-ahead loop of its own")
      assert(!buffer.readingAheadNow)
      // The retried attempt cut the round's end from what the first one buffered.
      val hundredth = written(99)
      assert(reports.map(r => (r.key, r.end, r.records)) ==
        Seq((key, ShardPosition.After(RecordPosition(hundredth.sequenceNumber, 0, lastInAggregate = true)), 100L)))
      assert(reports.head.bufferedRecords == 400)
    } finally ShardSessions.shared.retire(Seq(sourceId))
  }
}

object FetchRDDRetrySuite {

  /** The attempt numbers the round's task ran with (local mode: tasks run in the test's JVM). */
  val attempts = new ConcurrentLinkedQueue[Int]()
}
