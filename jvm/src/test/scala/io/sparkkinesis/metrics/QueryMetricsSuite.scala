package io.sparkkinesis.metrics

import org.scalatest.funsuite.AnyFunSuite

/** A query's gauges read the figures the driver holds, at most once every half second however many gauges ask. */
class QueryMetricsSuite extends AnyFunSuite {

  test("gauges are named after the stream and side, read the latest figures, and share one reading") {
    val q = new QueryMetrics("run", "id", "orders-etl")
    var reads = 0
    var records = 10L
    q.reads = Some((Seq("orders"),
        () => {
          reads += 1
          Seq(ReadStats("orders", 2.5, 5L, 7L, 70L, 1L, records, 100L))
        }))
    q.writes = Some((new Object, None, () => WriteStats(None, 3L, 30L, 0L)))
    assert(q.sourceName == "kinesis.orders-etl")
    val gauges = SparkMetricsSource.registry(q).getGauges
    assert(gauges.keySet.toArray.toSeq.map(_.toString).sorted == Seq(
      "sink.perRow.bytesWritten", "sink.perRow.recordsWritten", "sink.perRow.throttledRecords",
      "source.orders.avgMsBehindLatest", "source.orders.bytesRead", "source.orders.maxMsBehindLatest",
      "source.orders.pendingBytes", "source.orders.pendingRecords", "source.orders.recordsRead",
      "source.orders.throttledCalls"))
    assert(gauges.get("source.orders.maxMsBehindLatest").getValue == 5L)
    assert(gauges.get("source.orders.avgMsBehindLatest").getValue == 2.5)
    assert(gauges.get("sink.perRow.recordsWritten").getValue == 3L)
    assert(gauges.get("source.orders.recordsRead").getValue == 10L)
    assert(reads == 1, "one reading for the gauges read together")
    records = 20L
    assert(q.stats(System.currentTimeMillis() + QueryMetrics.FreshMillis).reads.head.recordsRead == 20L)
  }
}
