"""Streaming writes into Kinesis: a query killed with SIGKILL and restarted, and the sink's progress metrics.

Issue 5, "Done when" 5 (scenario S5): a streaming query from the rate source into Kinesis, killed and restarted.
The driver runs in a subprocess of its own (session and process group), so the test can kill it, JVM included,
at an arbitrary point of a micro-batch. After the restart the query stops gracefully; every row of every
committed micro-batch must then be in the stream at least once. The duplicates (rows written by the killed run
and again by the re-run of its unfinished batch) are counted and reported: they are what at-least-once means
(docs/sink.md).
"""

from __future__ import annotations

import time
from collections import Counter

from conftest import connector_options
from harness import checkpoint as spark_log
from harness.waiting import QUERY_END_S
from harness import streams
from harness.fault_fixtures import create_stream, fault_proxy, landed  # noqa: F401 (fault_proxy: pytest fixture)
from harness.fault_proxy import FAILED_PUT_ENTRIES
from harness.streaming import SINK_DRIVER, drivers  # noqa: F401 (drivers: pytest fixture)

ROWS_PER_SECOND = 1000
START_TIMEOUT_S = 120.0
RUN_TIMEOUT_S = 120.0


def _rows_of_committed_batches(checkpoint) -> int:
    """How many rate rows the committed batches hold: the rate source's offset is in seconds (no ramp-up)."""
    seconds = spark_log.source_offset(checkpoint, spark_log.commits(checkpoint)[-1])
    return int(seconds) * ROWS_PER_SECOND


def test_killed_streaming_query_restarts_with_every_row_at_least_once(kinesalite_server, stream_name, tmp_path,
                                                                       drivers):  # noqa: F811
    kinesis = streams.client(kinesalite_server)
    streams.create_stream(kinesis, stream_name, 2)
    # Small calls, one at a time: writing a micro-batch takes longer than the trigger interval, so the kill
    # lands in the middle of a batch whose first records are already in the stream.
    options = dict(connector_options(kinesalite_server), streamName=stream_name, maxRecordsPerRequest="20",
                   maxInFlightRequests="1")
    checkpoint = tmp_path / "checkpoint"

    first = drivers("first", SINK_DRIVER, {"sink": options, "checkpoint": str(checkpoint),
                                           "rows_per_second": ROWS_PER_SECOND})
    try:
        # Kill while batches are flowing: a few committed, and the next one planned and being written.
        first.wait_until(lambda: len(spark_log.commits(checkpoint)) >= 4 and spark_log.offset_batches(checkpoint)[-1] >
                         spark_log.commits(checkpoint)[-1], START_TIMEOUT_S, "4 committed batches and a running one",
                         interval=0.1)
        assert first.alive(), first.log_tail()
        time.sleep(0.2)  # into the running batch's writes
    finally:
        first.kill()
    killed_after = max(spark_log.commits(checkpoint))
    landed_before_restart = len(streams.read_all(kinesis, stream_name))

    second = first.restart("second")
    try:
        second.wait_until(lambda: max(spark_log.commits(checkpoint)) >= killed_after + 4, RUN_TIMEOUT_S,
                          "4 more committed batches after the restart", interval=0.1)
        code = second.stop(timeout=RUN_TIMEOUT_S)
        assert code == 0, second.log_tail()
    finally:
        second.kill()

    expected = _rows_of_committed_batches(checkpoint)
    counts = Counter(int(r["data"]) for r in streams.read_all(kinesis, stream_name))
    missing = [v for v in range(expected) if counts[v] == 0]
    assert not missing, f"{len(missing)} rows of committed batches are missing, e.g. {missing[:10]}"
    duplicates = sum(n - 1 for n in counts.values() if n > 1)
    print(f"\nkill-and-restart: {expected} committed rows, {landed_before_restart} records before the restart, "
          f"{sum(counts.values())} records in the stream, {duplicates} duplicates")
    assert sum(counts.values()) == len(counts) + duplicates


def test_progress_reports_each_batch_sink_counters(spark, fault_proxy, stream_name, tmp_path):
    """`sink.metrics` of every progress holds the counters of that batch's write, throttled retries included."""
    create_stream(fault_proxy, stream_name, 2)
    fault_proxy.fail_put_entries(0.2, seed=3)
    files, per_file = 3, 1000
    source = tmp_path / "input"
    for i in range(files):  # one Parquet file per write, so maxFilesPerTrigger=1 makes one batch per write
        (spark.range(i * per_file, (i + 1) * per_file, 1, 1)
         .selectExpr("CAST(id AS STRING) AS data", "CAST(id % 7 AS STRING) AS partitionKey")
         .write.mode("append").parquet(str(source)))
    query = (spark.readStream.schema("data STRING, partitionKey STRING").option("maxFilesPerTrigger", 1)
             .parquet(str(source))
             .writeStream.format("kinesis").options(**connector_options(fault_proxy), streamName=stream_name)
             .option("checkpointLocation", str(tmp_path / "checkpoint")).trigger(availableNow=True).start())
    try:
        assert query.awaitTermination(QUERY_END_S), "the AvailableNow query did not finish"
    finally:
        query.stop()
    assert query.exception() is None, query.exception()

    batches = [p for p in query.recentProgress if p["numInputRows"] > 0]
    assert len(batches) == files, [p["numInputRows"] for p in query.recentProgress]
    metrics = [{k: int(v) for k, v in p["sink"]["metrics"].items()} for p in batches]
    assert [m["recordsWritten"] for m in metrics] == [p["numInputRows"] for p in batches]
    assert all(m["droppedRecords"] == 0 for m in metrics)
    injected = fault_proxy.injected(FAILED_PUT_ENTRIES)
    assert injected > 0
    assert sum(m["retriedRecords"] for m in metrics) == injected
    assert sum(m["throttledRecords"] for m in metrics) == injected
    assert sum(m["putRecordsCalls"] for m in metrics) == len(fault_proxy.put_records_requests())
    records = landed(fault_proxy, stream_name)
    assert sorted(int(r["data"]) for r in records) == list(range(files * per_file))
    assert sum(m["bytesWritten"] for m in metrics) == sum(len(r["data"]) + len(r["partition_key"]) for r in records)
