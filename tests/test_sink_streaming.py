"""A streaming query from the rate source into Kinesis, killed with SIGKILL and restarted from its checkpoint.

Issue 5, "Done when" 5 (scenario S5). The driver runs in a subprocess of its own (session and process group),
so the test can kill it, JVM included, at an arbitrary point of a micro-batch. After the restart the query
stops gracefully; every row of every committed micro-batch must then be in the stream at least once. The
duplicates (rows written by the killed run and again by the re-run of its unfinished batch) are counted and
reported: they are what at-least-once means (docs/sink.md).
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
