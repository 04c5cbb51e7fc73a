package io.sparkkinesis.reader

import java.time.Instant

import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.services.kinesis.model.Record

import io.sparkkinesis.aws.{AwsConnection, CredentialsConfig, StreamRef}
import io.sparkkinesis.fetching.{FetchSettings, FetchedPage, ShardFetcher}
import io.sparkkinesis.offsets.{RecordPosition, ShardKey, ShardPosition, StartPosition}

/**
 * A real-time task's fetchers and the executor's pool across two batches, without a server (a fetcher that serves
 * ten records in pages of five): a task whose batch ends in the middle of a page gives its fetcher back with the
 * page's rest, and the next batch's task starting there hands those on first and opens nothing; a task that failed
 * or was not asked for its offset, or a next task starting elsewhere, leaves nothing pooled.
 */
class RealTimeReaderPoolSuite extends AnyFunSuite {

  private val key = ShardKey("s", "shardId-000000000000")

  /** Ten records, `pageSize` a fetch, from `from` on; counts its fetches and closes. */
  private final class Pages(from: Int = 0, pageSize: Int = 5) extends ShardFetcher {
    private var next = from
    var fetches = 0
    var closes = 0
    override def fetch(patient: Boolean): FetchedPage = {
      fetches += 1
      val records = (next until math.min(10, next + pageSize)).map { i =>
        Record.builder().sequenceNumber(s"${100 + i}").partitionKey(s"k$i").data(SdkBytes.fromUtf8String(s"r$i"))
          .approximateArrivalTimestamp(Instant.ofEpochMilli(1000L + i)).build()
      }
      next += records.size
      FetchedPage(records, 0L, shardEnded = false)
    }
    override def shardEnded: Boolean = false
    override def calls: Long = fetches.toLong
    override def throttled: Long = 0L
    override def dataLoss: Long = 0L
    override def close(): Unit = closes += 1
  }

  private def after(i: Int): ShardPosition =
    ShardPosition.After(RecordPosition(s"${100 + i}", 0L, lastInAggregate = true))

  private def partition(start: ShardPosition) = KinesisRealTimeInputPartition(Seq(key -> start),
    Map("s" -> StreamRef("s", None, None)),
    AwsConnection("us-east-1", Some("http://127.0.0.1:1"),
      CredentialsConfig.DefaultChain, cborEnabled = false), FetchSettings(maxRecordsPerCall = 5, minPeriodMillis = 0L),
    endedBefore = Set.empty, sourceId = "query")

  /** A reader of `start` whose opened fetchers are kept in `opened` (each reads from the record `start` is after). */
  private final class Task(start: ShardPosition, pool: ShardSessions, opened: collection.mutable.Buffer[Pages]) {
    val reader = new KinesisRealTimePartitionReader(partition(start), KinesisSchema.Databricks,
      open = (_, _) => {
        val f = new Pages(from = start match {
          case ShardPosition.After(p) => p.sequenceNumber.toInt - 99
          case _ => 0
        })
        opened += f
        f
      }, sessions = pool)

    /** The data of the next `n` records handed on. */
    def read(n: Int): Seq[String] = (1 to n).map { _ =>
      assert(reader.nextWithTimeout(System.currentTimeMillis(), 5000L).hasRecord)
      new String(reader.get().getBinary(1), "UTF-8") // data, after partitionKey
    }

    def position: ShardPosition = reader.getOffset.asInstanceOf[KinesisPartitionOffset].positions(key)
    def calls: Long = reader.getOffset.asInstanceOf[KinesisPartitionOffset].reports.head.counts.calls
  }

  test("a batch ending mid-page gives the fetcher back with the page's rest; the next batch reads on, opening none") {
    val pool = new ShardSessions()
    val opened = collection.mutable.Buffer.empty[Pages]
    val first = new Task(ShardPosition.NotStarted(StartPosition.TrimHorizon), pool, opened)
    assert(first.read(3) == Seq("r0", "r1", "r2"))
    assert(first.position == after(2))
    first.reader.close()
    assert(pool.size == 1 && opened.map(_.closes) == Seq(0))

    val second = new Task(after(2), pool, opened)
    assert(second.read(7) == (3 until 10).map(i => s"r$i"))
    assert(opened.size == 1, "the next batch's task opened a fetcher of its own")
    assert(opened.head.fetches == 2)
    assert(second.calls == 1L, "the second batch's calls count only its own")
    assert(pool.size == 0, "taken: no other task can have it")
  }

  test("a task not asked for its offset (it failed, or was stopped) closes its fetcher instead") {
    val pool = new ShardSessions()
    val opened = collection.mutable.Buffer.empty[Pages]
    val first = new Task(ShardPosition.NotStarted(StartPosition.TrimHorizon), pool, opened)
    first.read(3)
    first.reader.close()
    assert(pool.size == 0 && opened.map(_.closes) == Seq(1))
  }

  test("a next task starting elsewhere (a batch run again from its start) closes the pooled fetcher, opens its own") {
    val pool = new ShardSessions()
    val opened = collection.mutable.Buffer.empty[Pages]
    val first = new Task(ShardPosition.NotStarted(StartPosition.TrimHorizon), pool, opened)
    first.read(3)
    first.position
    first.reader.close()
    val again = new Task(ShardPosition.NotStarted(StartPosition.TrimHorizon), pool, opened)
    assert(again.read(4) == Seq("r0", "r1", "r2", "r3"))
    assert(opened.size == 2 && opened.map(_.closes) == Seq(1, 0))
  }
}
