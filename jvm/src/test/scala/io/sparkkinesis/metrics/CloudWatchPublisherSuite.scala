package io.sparkkinesis.metrics

import java.time.Instant

import scala.collection.mutable

import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.services.cloudwatch.model.StandardUnit

import io.sparkkinesis.aws.{AwsConnection, CredentialsConfig}
import io.sparkkinesis.testing.CapturedLogs

/**
 * What a query publishes to CloudWatch at each tick, and how it bears CloudWatch failing: never an exception to the
 * query, one warning, a count, ticks skipped for a while, and the counts of the failed ticks sent later. The sender is
 * a fake here: it fails on demand, which moto's CloudWatch cannot be made to do (tests/test_streaming_metrics.py
 * publishes to moto for real).
 */
class CloudWatchPublisherSuite extends AnyFunSuite {

  private val settings = CloudWatchSettings("SparkKinesis", Seq("Environment" -> "test"),
    AwsConnection("eu-west-1", None, CredentialsConfig.DefaultChain, cborEnabled = true))

  private class FakeSender extends CloudWatchSender {
    val calls = mutable.Buffer.empty[Seq[Datum]]
    var failWith: Option[RuntimeException] = None
    @volatile var closed = false
    override def put(namespace: String, at: Instant, data: Seq[Datum]): Unit = {
      assert(namespace == "SparkKinesis")
      failWith.foreach(e => throw e)
      calls += data
    }
    override def close(): Unit = closed = true
  }

  private final class Figures {
    var reads = Seq(ReadStats("orders", 1500.5, 3000L, 120L, 4800L, throttledCalls = 2L, recordsRead = 100L,
        bytesRead = 4000L))
    var writes: Option[WriteStats] = Some(WriteStats(Some("enriched"), 90L, 3600L, 1L))
    def stats: QueryStats = QueryStats(reads, writes)
  }

  private def value(data: Seq[Datum], name: String, stream: String = "orders"): Double =
    data.filter(d => d.name == name && d.dimensions.contains(Dimensions.StreamName -> stream)) match {
      case Seq(d) => d.value
      case other => fail(s"$name of $stream: $other")
    }

  private val now = Instant.parse("2026-11-27T01:00:00Z")

  test("a tick sends the lag and backlog as they are and the counts since the last tick, with the dimensions") {
    val sender = new FakeSender
    val figures = new Figures
    val publisher = new CloudWatchPublisher("orders-etl", settings, () => figures.stats, sender)
    publisher.tick(now)
    val first = sender.calls.head
    assert(sender.calls.size == 1 && first.size == 10, first)
    assert(value(first, "maxMsBehindLatest") == 3000d && value(first, "avgMsBehindLatest") == 1500.5)
    assert(value(first, "pendingRecords") == 120d && value(first, "pendingBytes") == 4800d)
    assert(value(first, "recordsRead") == 100d && value(first, "bytesRead") == 4000d)
    assert(value(first, "throttledCalls") == 2d)
    assert(value(first, "recordsWritten", "enriched") == 90d && value(first, "bytesWritten", "enriched") == 3600d)
    assert(value(first, "throttledRecords", "enriched") == 1d)
    assert(first.forall(_.dimensions.take(1) == Seq(Dimensions.QueryName -> "orders-etl")))
    assert(first.forall(_.dimensions.last == ("Environment" -> "test")))
    assert(first.find(_.name == "maxMsBehindLatest").get.unit == "Milliseconds")
    assert(first.find(_.name == "bytesRead").get.unit == "Bytes")
    assert(first.find(_.name == "recordsRead").get.unit == "Count")

    figures.reads = figures.reads.map(_.copy(maxMsBehindLatest = 10L, recordsRead = 130L, bytesRead = 5200L))
    figures.writes = Some(WriteStats(Some("enriched"), 100L, 4000L, 1L))
    publisher.tick(now.plusSeconds(60))
    val second = sender.calls(1)
    assert(value(second, "maxMsBehindLatest") == 10d, "a gauge as it is now")
    assert(value(second, "recordsRead") == 30d && value(second, "bytesRead") == 1200d, "counts since the last tick")
    assert(value(second, "recordsWritten", "enriched") == 10d && value(second, "throttledRecords", "enriched") == 0d)
    assert(value(second, "throttledCalls") == 0d)
    assert(publisher.publishes == 2 && publisher.failures == 0)
  }

  test("a sink writing to the streams its rows name publishes without a StreamName dimension") {
    val sender = new FakeSender
    val figures = new Figures
    figures.reads = Nil
    figures.writes = Some(WriteStats(None, 5L, 50L, 0L))
    new CloudWatchPublisher("q", settings, () => figures.stats, sender).tick(now)
    assert(sender.calls.head.map(_.name) == Seq("recordsWritten", "bytesWritten", "throttledRecords"))
    assert(sender.calls.head.forall(_.dimensions == Seq(Dimensions.QueryName -> "q", "Environment" -> "test")))
  }

  test("CloudWatch failing: no exception, one warning, counted, ticks skipped 1, 3, 7; the counts go out later") {
    val sender = new FakeSender
    val figures = new Figures
    val publisher = new CloudWatchPublisher("orders-etl", settings, () => figures.stats, sender)
    val logs = new CapturedLogs(classOf[CloudWatchPublisher].getName)
    try {
      publisher.tick(now) // published: 100 records read
      sender.failWith = Some(new RuntimeException("Service Unavailable (HTTP 503)"))
      figures.reads = figures.reads.map(_.copy(recordsRead = 150L))
      // Tick by tick: which ones try (a failure, then 1 skipped; a failure, 3 skipped; a failure, 7 skipped).
      val tried = (1 to 14).map { i =>
        val before = publisher.failures
        publisher.tick(now.plusSeconds(60L * i))
        publisher.failures > before
      }
      assert(tried == Seq(true, false, true, false, false, false, true, false, false, false, false, false, false,
          false), tried)
      assert(publisher.failures == 3 && publisher.publishes == 1)
      assert(logs.warnings.size == 1, logs.warnings)
      assert(
        logs.warnings.head.contains("orders-etl") && logs.warnings.head.contains("HTTP 503") &&
          logs.warnings.head.contains("the query goes on"), logs.warnings.head)

      sender.failWith = None
      publisher.tick(now.plusSeconds(60L * 15))
      assert(publisher.publishes == 2 && sender.calls.size == 2)
      assert(value(sender.calls(1), "recordsRead") == 50d, "the records read while CloudWatch failed")
      // Back to every tick after a success.
      publisher.tick(now.plusSeconds(60L * 16))
      assert(sender.calls.size == 3 && value(sender.calls(2), "recordsRead") == 0d)
      assert(logs.warnings.size == 1, logs.warnings)
    } finally logs.close()
  }

  test("the backoff stops growing at 15 skipped ticks") {
    val sender = new FakeSender
    sender.failWith = Some(new RuntimeException("down"))
    val figures = new Figures
    val publisher = new CloudWatchPublisher("q", settings, () => figures.stats, sender)
    (1 to 200).foreach(i => publisher.tick(now.plusSeconds(i.toLong)))
    // Tries at ticks 1, 3, 7, 15, 31, then every 16th: 5 + (200 - 31) / 16.
    assert(publisher.failures == 5 + (200 - 31) / 16, publisher.failures)
  }

  test("over 1,000 metrics go out in calls of at most 1,000") {
    val sender = new FakeSender
    val reads = (1 to 150).map(i => ReadStats(s"s$i", 0d, 0L, 0L, 0L, 0L, i.toLong, 0L))
    new CloudWatchPublisher("q", settings, () => QueryStats(reads, None), sender).tick(now)
    assert(sender.calls.map(_.size) == Seq(1000, 50))
    assert(sender.calls.flatten.filter(_.name == "recordsRead").map(_.value).sum == (1 to 150).sum.toDouble)
  }

  test("stop sends what was counted since the last tick, backing off or not, then closes the sender") {
    val sender = new FakeSender
    val figures = new Figures
    val publisher = new CloudWatchPublisher("q", settings, () => figures.stats, sender)
    publisher.start(3600000L)
    publisher.tick(now)
    // A failure: the next ticks would be skipped, and these 50 records counted only when one went out.
    sender.failWith = Some(new RuntimeException("CloudWatch is down"))
    figures.reads = figures.reads.map(_.copy(recordsRead = 150L))
    publisher.tick(now)
    sender.failWith = None
    figures.reads = figures.reads.map(_.copy(recordsRead = 175L))
    publisher.stop()
    val deadline = System.nanoTime() + 10000000000L
    while (!sender.closed && System.nanoTime() < deadline) Thread.sleep(10)
    assert(sender.closed, "the sender closes after the last round")
    assert(sender.calls.size == 2, sender.calls)
    assert(value(sender.calls.last, "recordsRead") == 75d, "the counts since the last tick that went out")
  }

  test("stop does not wait for a tick whose call to CloudWatch is under way") {
    val entered = new java.util.concurrent.CountDownLatch(1)
    val release = new java.util.concurrent.CountDownLatch(1)
    val sender = new FakeSender {
      override def put(namespace: String, at: Instant, data: Seq[Datum]): Unit = {
        entered.countDown()
        release.await(30, java.util.concurrent.TimeUnit.SECONDS)
        super.put(namespace, at, data)
      }
    }
    val publisher = new CloudWatchPublisher("q", settings, () => new Figures().stats, sender)
    publisher.start(3600000L)
    val ticking = new Thread(() => publisher.tick(now))
    ticking.start()
    try {
      assert(entered.await(10, java.util.concurrent.TimeUnit.SECONDS), "the tick reached CloudWatch")
      val stopped = new java.util.concurrent.CountDownLatch(1)
      val stopping = new Thread(() => { publisher.stop(); stopped.countDown() })
      stopping.start()
      assert(stopped.await(10, java.util.concurrent.TimeUnit.SECONDS), "stop returned while the call was under way")
    } finally release.countDown()
    ticking.join(10000)
  }

  test("stop of a publisher that never started closes the sender at once") {
    val sender = new FakeSender
    new CloudWatchPublisher("q", settings, () => QueryStats.Empty, sender).stop()
    assert(sender.closed && sender.calls.isEmpty)
  }

  test("PutMetricData's request carries each datum's name, unit, value, time and dimensions") {
    val request = CloudWatchSender.request("NS", now,
      Seq(Datum("pendingRecords", Datum.Count, 1.0e7, Seq("QueryName" -> "q", "StreamName" -> "orders"))))
    assert(request.namespace() == "NS")
    val datum = request.metricData().get(0)
    assert(request.metricData().size() == 1)
    assert(datum.metricName() == "pendingRecords")
    assert(datum.unit() == StandardUnit.COUNT)
    assert(datum.value() == 1.0e7)
    assert(datum.timestamp() == now)
    assert(datum.dimensions().get(1).name() == "StreamName" && datum.dimensions().get(1).value() == "orders")
    // Every unit the publisher uses is one of CloudWatch's (an unknown text would become UNKNOWN_TO_SDK_VERSION).
    for (unit <- Seq(Datum.Milliseconds, Datum.Count, Datum.Bytes))
      assert(StandardUnit.fromValue(unit) != StandardUnit.UNKNOWN_TO_SDK_VERSION, unit)
  }
}
