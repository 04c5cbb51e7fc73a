package io.sparkkinesis.reader

import java.time.Instant

import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.services.kinesis.model.Record

import io.sparkkinesis.aws.{AwsConnection, CredentialsConfig, StreamRef}
import io.sparkkinesis.fetching.{FetchSettings, FetchedPage, ShardFetcher}
import io.sparkkinesis.offsets.{ShardKey, ShardPosition, StartPosition}

/**
 * Records of 10 MiB (issue 28.6: a stream's maximum record size may be raised to 10,240 KiB) are read whole, planned
 * one to a batch however small `maxBytesPerTrigger` is, and read ahead within `fetchBufferSize`. The fetcher is a
 * fake serving one 10 MiB record per GetRecords page, as the service does: the local servers refuse records over
 * 1 MiB.
 */
class LargeRecordBufferSuite extends AnyFunSuite {
  private val MiB = 1024 * 1024
  private val key = ShardKey("orders", "shardId-000000000000")
  private val start = ShardPosition.NotStarted(StartPosition.TrimHorizon)

  /** A shard of endless 10 MiB records (a one-character key and 10 MiB less one byte of data), far behind its tip. */
  private final class LargeRecordFetcher extends ShardFetcher {
    @volatile var pages = 0
    override def fetch(patient: Boolean): FetchedPage = {
      pages += 1
      FetchedPage(Seq(record(pages)), millisBehindLatest = 60000, shardEnded = false)
    }
    override def shardEnded = false
    override def calls: Long = pages.toLong
    override def throttled = 0L
    override def dataLoss = 0L
  }

  private def record(n: Int): Record = Record.builder().sequenceNumber(n.toString).partitionKey("k")
    .data(SdkBytes.fromByteArrayUnsafe(Array.fill(10 * MiB - 1)(n.toByte)))
    .approximateArrivalTimestamp(Instant.now()).build()

  private def buffer(fetcher: ShardFetcher, bufferBytes: Long): ShardBuffer = {
    val connection = AwsConnection("us-east-1", Some("http://127.0.0.1:1"),
      CredentialsConfig.StaticKeys("test-key", "test-secret", None), cborEnabled = false)
    val b = new ShardBuffer(key, StreamRef("orders", None, None), connection,
      FetchSettings(maxRecordsPerCall = 1, minPeriodMillis = 0L, bufferBytes = bufferBytes), _ => fetcher)
    b.align(start)
    b
  }

  test("a 10 MiB record is read whole and makes a batch of its own, even over maxBytesPerTrigger") {
    val b = buffer(new LargeRecordFetcher, bufferBytes = 256L * MiB)
    assert(b.fill(0L), "a full page: the shard has more")
    assert(b.fill(0L))
    val report = b.cut(start, maxRecords = 100, maxBytes = MiB.toLong, cutoffMillis = None, location = "here")
    assert(report.records == 1 && report.bytes == 10L * MiB, report)
    val end = report.end match {
      case ShardPosition.After(p) => p
      case other => fail(s"cut planned $other")
    }
    assert(end.sequenceNumber == "1", end)
    val copied = b.slice(start, end).getOrElse(fail("the buffer holds the planned record"))
    assert(copied.map(_.size) == Seq(10L * MiB))
    assert(copied.head.data.forall(_ == 1.toByte))
    // The next round starts after it (dropping it from the buffer), and the next batch takes the second, alone.
    b.align(ShardPosition.After(end))
    assert(b.buffered == 1)
    val next = b.cut(ShardPosition.After(end), 100, MiB.toLong, None, "here")
    assert(next.records == 1 && next.bytes == 10L * MiB, next)
  }

  test("reading ahead 10 MiB records stops at fetchBufferSize (plus the page that reached it)") {
    val fetcher = new LargeRecordFetcher
    val limit = 25L * MiB
    val b = buffer(fetcher, limit)
    b.fill(0L)
    assert(b.startReadAhead())
    // Each step is a second later than the last, so every call is due; the fake never runs out of records.
    var now = System.currentTimeMillis()
    var steps = 0
    while (b.readAheadOnce(now, maxRecords = 1000, idleMillis = Long.MaxValue).isDefined && steps < 20) {
      now += 10000
      steps += 1
    }
    assert(steps < 20, "read-ahead never stopped")
    assert(!b.readingAheadNow)
    assert(b.bytes <= limit + 11L * MiB, s"${b.bytes} bytes held by the buffer, over $limit plus one record")
    assert(fetcher.pages == b.buffered, "every page read is held")
  }
}
