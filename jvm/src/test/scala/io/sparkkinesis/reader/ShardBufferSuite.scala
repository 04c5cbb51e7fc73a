package io.sparkkinesis.reader

import java.time.Instant
import java.util.concurrent.{CountDownLatch, TimeUnit}

import scala.concurrent.{Await, ExecutionContext, Future}
import scala.concurrent.duration._

import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.services.kinesis.model.Record

import io.sparkkinesis.aws.{AwsConnection, CredentialsConfig, StreamRef}
import io.sparkkinesis.errors.KinesisErrors
import io.sparkkinesis.fetching.{FetchSettings, FetchedPage, ShardFetcher}
import io.sparkkinesis.offsets.{ShardKey, ShardPosition, StartPosition}

/**
 * A throttled call never holds a buffer's lock or a read-ahead thread (issue 12.6). The fetcher is a fake: a
 * local server never throttles. Its first page is served at once; a patient call after it "backs off" until the
 * test lets it go, and an impatient call fails at once, as [[io.sparkkinesis.fetching.PollingShardFetcher]] does
 * with a throttled call.
 */
class ShardBufferSuite extends AnyFunSuite {
  private val key = ShardKey("orders", "shardId-000000000000")

  private final class BackingOffFetcher extends ShardFetcher {
    val backingOff = new CountDownLatch(1)
    val release = new CountDownLatch(1)
    @volatile var pages = 0
    override def fetch(patient: Boolean): FetchedPage = {
      pages += 1
      if (pages == 1) FetchedPage((1 to 3).map(record), millisBehindLatest = 5000, shardEnded = false)
      else if (!patient) throw KinesisErrors.retriesExhausted("GetRecords on shard", 1, List("throttled"),
        new RuntimeException("throttled"))
      else {
        backingOff.countDown()
        assert(release.await(30, TimeUnit.SECONDS))
        FetchedPage(Seq(record(4)), millisBehindLatest = 0, shardEnded = false)
      }
    }
    override def shardEnded = false
    override def calls: Long = pages.toLong
    override def throttled = 0L
    override def dataLoss = 0L
  }

  private def record(n: Int): Record = Record.builder().sequenceNumber(n.toString).partitionKey("k")
    .data(SdkBytes.fromUtf8String(s"r$n")).approximateArrivalTimestamp(Instant.now()).build()

  private def buffer(fetcher: ShardFetcher): ShardBuffer = {
    val connection = AwsConnection("us-east-1", Some("http://127.0.0.1:1"),
      CredentialsConfig.StaticKeys("test-key", "test-secret", None), cborEnabled = false)
    val b = new ShardBuffer(key, StreamRef("orders", None, None), connection,
      FetchSettings(maxRecordsPerCall = 3, minPeriodMillis = 0L), _ => fetcher)
    b.align(ShardPosition.NotStarted(StartPosition.TrimHorizon))
    b
  }

  test("while a prefetch round's call backs off, the buffer's records can be copied and cut by others") {
    val fetcher = new BackingOffFetcher
    val b = buffer(fetcher)
    assert(b.fill(0L)) // a full page: more is waiting
    val start = ShardPosition.NotStarted(StartPosition.TrimHorizon)
    val round = new Thread(() => b.fill(0L))
    round.start()
    try {
      assert(fetcher.backingOff.await(30, TimeUnit.SECONDS))
      // The round is inside its call: a batch task copies its range and a cut is made, without waiting for it.
      val copy = Future {
        b.slice(start,
          b.cut(start, 10, Long.MaxValue, None, "here").end match {
            case ShardPosition.After(p) => p
            case other => fail(s"cut planned $other")
          })
      }(ExecutionContext.global)
      val copied = Await.result(copy, 10.seconds)
      assert(copied.map(_.map(r => new String(r.data, "UTF-8"))).contains(Seq("r1", "r2", "r3")))
    } finally fetcher.release.countDown()
    round.join(30000)
    assert(!round.isAlive)
    assert(b.buffered == 4, "the page the round waited for is in the buffer")
  }

  test("a read-ahead call that is throttled fails at once instead of backing off on the read-ahead thread") {
    val fetcher = new BackingOffFetcher
    val b = buffer(fetcher)
    assert(b.fill(0L))
    assert(b.startReadAhead())
    val e = intercept[Exception](b.readAheadOnce(System.currentTimeMillis(), 100, 60000L))
    assert(e.getMessage.contains("KINESIS_RETRIES_EXHAUSTED"), e.getMessage)
    assert(fetcher.backingOff.getCount == 1, "the read-ahead call backed off")
  }
  test("a read-ahead call does not wait behind a round's call that is backing off: it reads nothing and stops") {
    val fetcher = new BackingOffFetcher
    val b = buffer(fetcher)
    assert(b.fill(0L))
    val round = new Thread(() => b.fill(0L))
    round.start()
    try {
      assert(fetcher.backingOff.await(30, TimeUnit.SECONDS))
      assert(b.startReadAhead())
      // Before, the read-ahead thread waited here until the round's call was let go.
      val step = Future(b.readAheadOnce(System.currentTimeMillis(), 100, 60000L))(ExecutionContext.global)
      assert(Await.result(step, 10.seconds).isEmpty, "the read-ahead loop should stop while a call is under way")
      assert(!b.readingAheadNow)
      assert(fetcher.pages == 2, "only the round's call was made")
      assert(b.fill(0L, patient = false) == false, "an impatient fill while a call is under way reads nothing")
    } finally fetcher.release.countDown()
    round.join(30000)
    assert(b.buffered == 4)
  }

  test("a closed buffer reads nothing and opens no fetcher again") {
    var opened = 0
    val connection = AwsConnection("us-east-1", Some("http://127.0.0.1:1"),
      CredentialsConfig.StaticKeys("test-key", "test-secret", None), cborEnabled = false)
    val b = new ShardBuffer(key, StreamRef("orders", None, None), connection,
      FetchSettings(maxRecordsPerCall = 3, minPeriodMillis = 0L), { _ => opened += 1; new BackingOffFetcher })
    b.align(ShardPosition.NotStarted(StartPosition.TrimHorizon))
    assert(b.fill(0L) && opened == 1)
    b.close()
    // A fill that comes after the registry dropped the buffer (a round or read-ahead under way) must not open a
    // fetcher (with fan-out, a subscription) that nothing would close.
    assert(!b.fill(0L))
    assert(opened == 1 && b.buffered == 0)
  }
}
