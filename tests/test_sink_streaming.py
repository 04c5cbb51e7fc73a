"""Streaming writes into Kinesis: a query killed with SIGKILL and restarted, and the sink's progress metrics.

Issue 5, "Done when" 5 (scenario S5): a streaming query from the rate source into Kinesis, killed and restarted.
The driver runs in a subprocess of its own (session and process group), so the test can kill it, JVM included,
at an arbitrary point of a micro-batch. After the restart the query stops gracefully; every row of every
committed micro-batch must then be in the stream at least once. The duplicates (rows written by the killed run
and again by the re-run of its unfinished batch) are counted and reported: they are what at-least-once means
(docs/sink.md).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from conftest import connector_options
from harness import streams
from harness.fault_fixtures import fault_proxy  # noqa: F401 (pytest fixture)
from harness.fault_proxy import FAILED_PUT_ENTRIES

ROWS_PER_SECOND = 1000
START_TIMEOUT_S = 120.0
RUN_TIMEOUT_S = 120.0

DRIVER = r'''
import json, os, sys, time
from pyspark.sql import SparkSession
from spark_kinesis import configure_spark_with_kinesis

options, checkpoint, stop_file, rate = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
builder = (SparkSession.builder.master("local[2]").appName("sink-kill-restart")
           .config("spark.ui.enabled", "false").config("spark.driver.host", "127.0.0.1")
           .config("spark.driver.bindAddress", "127.0.0.1").config("spark.sql.shuffle.partitions", "2"))
spark = configure_spark_with_kinesis(builder).getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
query = (spark.readStream.format("rate").option("rowsPerSecond", rate).option("numPartitions", 2).load()
         .selectExpr("CAST(value AS STRING) AS data", "CAST(value % 16 AS STRING) AS partitionKey")
         .writeStream.format("kinesis").options(**options).option("checkpointLocation", checkpoint)
         .trigger(processingTime="300 milliseconds").start())
print("started", flush=True)
deadline = time.monotonic() + 300
while not os.path.exists(stop_file) and time.monotonic() < deadline and query.isActive:
    query.awaitTermination(0.2)
if query.exception() is not None:
    print("failed:", query.exception(), flush=True)
    sys.exit(1)
query.stop()
spark.stop()
print("stopped", flush=True)
'''


def _start_driver(tmp_path: Path, options, checkpoint: Path, stop_file: Path, log_name: str) -> subprocess.Popen:
    script = tmp_path / "sink_driver.py"
    script.write_text(DRIVER)
    log = open(tmp_path / log_name, "w")
    return subprocess.Popen(
        [sys.executable, str(script), json.dumps(options), str(checkpoint), str(stop_file), str(ROWS_PER_SECOND)],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True, env=dict(os.environ, PYTHONUNBUFFERED="1"))


def _committed_batches(checkpoint: Path):
    commits = checkpoint / "commits"
    return sorted(int(p.name) for p in commits.iterdir() if p.name.isdigit()) if commits.is_dir() else []


def _planned_batches(checkpoint: Path):
    offsets = checkpoint / "offsets"
    return sorted(int(p.name) for p in offsets.iterdir() if p.name.isdigit()) if offsets.is_dir() else []


def _wait_for(condition, timeout: float, what: str, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if process.poll() is not None:
            raise AssertionError(f"the driver exited ({process.returncode}) while waiting for {what}:\n"
                                 f"{log.read_text()[-4000:]}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}:\n{log.read_text()[-4000:]}")
        time.sleep(0.1)


def _rows_of_committed_batches(checkpoint: Path) -> int:
    """How many rate rows the committed batches hold: the rate source's offset is in seconds (no ramp-up)."""
    last = _committed_batches(checkpoint)[-1]
    lines = (checkpoint / "offsets" / str(last)).read_text().splitlines()
    seconds = json.loads(lines[2])  # "v1", batch metadata, then the one source's offset
    return int(seconds) * ROWS_PER_SECOND


def test_killed_streaming_query_restarts_with_every_row_at_least_once(kinesalite_server, stream_name, tmp_path):
    kinesis = streams.client(kinesalite_server)
    streams.create_stream(kinesis, stream_name, 2)
    # Small calls, one at a time: writing a micro-batch takes longer than the trigger interval, so the kill
    # lands in the middle of a batch whose first records are already in the stream.
    options = dict(connector_options(kinesalite_server), streamName=stream_name, maxRecordsPerRequest="20",
                   maxInFlightRequests="1")
    checkpoint, stop_file = tmp_path / "checkpoint", tmp_path / "stop"

    first = _start_driver(tmp_path, options, checkpoint, stop_file, "first.log")
    try:
        # Kill while batches are flowing: a few committed, and the next one planned and being written.
        _wait_for(lambda: len(_committed_batches(checkpoint)) >= 4 and _planned_batches(checkpoint)[-1] >
                  _committed_batches(checkpoint)[-1], START_TIMEOUT_S, "4 committed batches and a running one",
                  first, tmp_path / "first.log")
        time.sleep(0.2)  # into the running batch's writes
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(timeout=30)
    killed_after = max(_committed_batches(checkpoint))
    landed_before_restart = len(streams.read_all(kinesis, stream_name))

    second = _start_driver(tmp_path, options, checkpoint, stop_file, "second.log")
    try:
        _wait_for(lambda: max(_committed_batches(checkpoint)) >= killed_after + 4, RUN_TIMEOUT_S,
                  "4 more committed batches after the restart", second, tmp_path / "second.log")
        stop_file.touch()
        second.wait(timeout=RUN_TIMEOUT_S)
        assert second.returncode == 0, (tmp_path / "second.log").read_text()[-4000:]
    finally:
        if second.poll() is None:
            os.killpg(second.pid, signal.SIGKILL)
            second.wait(timeout=30)

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
    streams.create_stream(streams.client(fault_proxy.upstream_endpoint), stream_name, 2)
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
        assert query.awaitTermination(120), "the AvailableNow query did not finish in 120 s"
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
    landed = streams.read_all(streams.client(fault_proxy.upstream_endpoint), stream_name)
    assert sorted(int(r["data"]) for r in landed) == list(range(files * per_file))
    assert sum(m["bytesWritten"] for m in metrics) == sum(len(r["data"]) + len(r["partition_key"]) for r in landed)
