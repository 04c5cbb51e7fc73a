package io.sparkkinesis.reader

import java.time.Instant

import scala.collection.mutable.ArrayBuffer

import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.services.kinesis.model.Record

import io.sparkkinesis.aws.{AwsConnection, CredentialsConfig, StreamRef}
import io.sparkkinesis.fetching.{FetchSettings, FetchedPage, ShardFetcher}
import io.sparkkinesis.offsets.{ShardKey, ShardPosition, StartPosition}

/**
 * The batch's last look at a polled shard, without a server: a fetcher whose records become visible at given times
 * after the task starts and whose calls take 100 ms, looked at every second, in a batch of 3.5 seconds. The looks
 * due at 0, 1 and 2 s come on time; the one due at 3 s, whose successor would fall after the deadline, waits until
 * just before it, so a record put at 3.15 s is handed on in this batch instead of after Spark's pause.
 */
class RealTimeLastLookSuite extends AnyFunSuite {

  private val key = ShardKey("s", "shardId-000000000000")
  private val periodMillis = 1000L
  private val batchMillis = 3500L
  private val callMillis = 100L

  /** Records visible from `visibleAt` (millis after `t0`, the batch's start) on; records each call's start. */
  private final class Timed(visibleAt: Seq[Long]) extends ShardFetcher {
    var t0 = 0L
    private var next = 0
    val callsAt = ArrayBuffer.empty[Long]
    override def fetch(patient: Boolean): FetchedPage = {
      val at = System.currentTimeMillis()
      callsAt += at - t0
      Thread.sleep(callMillis)
      val visible = visibleAt.indices.drop(next).takeWhile(i => visibleAt(i) <= at - t0)
      next += visible.size
      FetchedPage(visible.map { i =>
          Record.builder().sequenceNumber(s"${100 + i}").partitionKey(s"k$i").data(SdkBytes.fromUtf8String(s"r$i"))
            .approximateArrivalTimestamp(Instant.ofEpochMilli(t0 + visibleAt(i))).build()
        }, 0L, shardEnded = false)
    }
    override def shardEnded: Boolean = false
    override def calls: Long = callsAt.size.toLong
    override def throttled: Long = 0L
    override def dataLoss: Long = 0L
  }

  private def partition = KinesisRealTimeInputPartition(Seq(key -> ShardPosition.NotStarted(StartPosition.TrimHorizon)),
    Map("s" -> StreamRef("s", None, None)),
    AwsConnection("us-east-1", Some("http://127.0.0.1:1"), CredentialsConfig.DefaultChain, cborEnabled = false),
    FetchSettings(maxRecordsPerCall = 100, minPeriodMillis = periodMillis), endedBefore = Set.empty, sourceId = "q")

  test("the last look before the deadline is held back to end just before it, calls a period apart or more") {
    val fetcher = new Timed(visibleAt = Seq(0L, 3150L))
    val reader = new KinesisRealTimePartitionReader(partition, KinesisSchema.Databricks,
      open = (_, _) => fetcher, sessions = new ShardSessions())
    val t0 = System.currentTimeMillis()
    fetcher.t0 = t0
    val handed = ArrayBuffer.empty[String]
    while (reader.nextWithTimeout(System.currentTimeMillis(), t0 + batchMillis - System.currentTimeMillis()).hasRecord)
      handed += new String(reader.get().getBinary(1), "UTF-8") // data, after partitionKey
    reader.getOffset
    reader.close()
    val calls = fetcher.callsAt.toSeq
    assert(handed == Seq("r0", "r1"), s"records handed on in the batch; calls at $calls ms")
    assert(calls.size == 4, s"one look a period, the last held back: calls at $calls ms")
    // The reader times its looks from before it opens or calls the fetcher, so a gap here may be short of the
    // period by the time between the two: a few ms, or on a machine busy with other tests (CI's lanes side by side)
    // a thread descheduled for 100 ms or more (once: calls at 91, 1006, 2037 and 3275 ms). Looks without pacing
    // would come 100 ms apart (the call's time); GetRecords itself is paced by its fetcher (PollingShardFetcher).
    assert(calls.zip(calls.drop(1)).forall { case (a, b) => b - a >= periodMillis - 300 }, s"calls at $calls ms")
    assert(calls.last >= 3150L && calls.last < batchMillis, s"the last look at ${calls.last} ms")
  }
}
