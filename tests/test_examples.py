"""The example pipelines in examples/ run to completion against a local server and produce the right output.

Each example runs as a user runs it (`python examples/<name>.py ... --available-now`, credentials from the
environment) against kinesis-mock; its output is checked against what the test wrote, computed independently of
the connector (boto3's PutRecords results and read-back arrival times).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import defaultdict
from datetime import timezone
from pathlib import Path

import pytest

from conftest import pyspark_line
from harness import streams

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
RUN_TIMEOUT_S = 600  # a bound for a hang: the demo takes about 2 minutes here, CI machines have been 2-3 times slower
PROGRESS = re.compile(r"^\[(\w+)\] batch (\d+): ([\d,]+) records in ")


def _run_example(script: str, *args: str, master: str = "local[2]") -> str:
    """Runs an example to completion and returns its standard output; fails with its output if it fails."""
    env = dict(os.environ,
               AWS_ACCESS_KEY_ID="local-test-key", AWS_SECRET_ACCESS_KEY="local-test-secret",
               PYSPARK_SUBMIT_ARGS=f"--master {master} --conf spark.ui.enabled=false pyspark-shell")
    env.pop("PYTHONPATH", None)
    result = subprocess.run([sys.executable, str(EXAMPLES / script), *args], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    assert result.returncode == 0, (f"{script} exited with {result.returncode}\n--- stdout\n{result.stdout}"
                                    f"\n--- stderr (end)\n{result.stderr[-4000:]}")
    return result.stdout


def _records_in_progress_lines(stdout: str, name: str) -> int:
    """The records the example's per-batch progress lines add up to (and there is at least one line)."""
    counts = [int(m.group(3).replace(",", "")) for m in map(PROGRESS.match, stdout.splitlines())
              if m and m.group(1) == name]
    assert counts, f"no progress line from {name}:\n{stdout}"
    return sum(counts)


def _common_args(server, stream: str, tmp_path: Path) -> list:
    return ["--stream", stream, "--region", streams.REGION, "--endpoint-url", server.endpoint,
            "--checkpoint", str(tmp_path / "checkpoint"), "--available-now"]


def test_demo_reads_every_order_once_across_its_reshard():
    """`make demo`, the README's first command (after `make install-wheel`, which the suite's set-up did): it starts
    its own kinesalite, writes 6,000 orders while splitting a shard, and says OK only when its query counted each
    once (it exits 1 otherwise)."""
    stdout = _run_example("demo.py")
    assert "[demo] OK: every order was read exactly once, across the reshard" in stdout, stdout
    assert "[demo] ---- split shardId-000000000000 while the query runs ----" in stdout, stdout
    batches = [line for line in stdout.splitlines() if line.startswith("[demo] batch ")]
    assert batches, f"no progress line:\n{stdout}"


@pytest.mark.full  # the example's connector read is the batch and streaming reads' of make test; its sink is Spark's
def test_kinesis_to_parquet(spark, kinesis_mock_server, stream_name, tmp_path):
    kinesis = streams.client(kinesis_mock_server)
    streams.create_stream(kinesis, stream_name, 2)
    records = [(json.dumps({"event": i, "text": "x" * (i % 7)}), f"device-{i % 5}") for i in range(40)]
    landed = streams.put_records(kinesis, stream_name, records)
    expected = {(r["ShardId"], r["SequenceNumber"], data.encode(), key) for r, (data, key) in zip(landed, records)}
    arrival_days = {r["arrival_timestamp"].astimezone(timezone.utc).date()
                    for r in streams.read_all(kinesis, stream_name)}
    output = tmp_path / "parquet"

    stdout = _run_example("kinesis_to_parquet.py", *_common_args(kinesis_mock_server, stream_name, tmp_path),
                          "--output", str(output))

    rows = spark.read.parquet(str(output)).collect()
    assert {(r.shardId, r.sequenceNumber, bytes(r.data), r.partitionKey) for r in rows} == expected
    assert len(rows) == len(records)
    assert {r.arrival_date for r in rows} == arrival_days
    assert {p.name for p in output.glob("arrival_date=*")} == {f"arrival_date={d}" for d in arrival_days}
    assert _records_in_progress_lines(stdout, "kinesis_to_parquet") == len(records)


def _order(i: int) -> dict:
    return {"order_id": f"o-{i}", "customer": f"c-{i % 4}", "amount": round(2.75 * i, 2),
            "status": ("paid", "cancelled", "paid", "pending")[i % 4]}


def test_kinesis_to_kinesis(kinesis_mock_server, stream_name, tmp_path):
    kinesis = streams.client(kinesis_mock_server)
    source, target = f"{stream_name}-in", f"{stream_name}-out"
    streams.create_stream(kinesis, source, 2)
    streams.create_stream(kinesis, target, 2)
    orders = [_order(i) for i in range(30)]
    junk = [("not json at all", "junk-1"), (json.dumps({"status": "paid", "amount": 99}), "junk-2"),
            (json.dumps([1, 2, 3]), "junk-3")]
    landed = streams.put_records(kinesis, source, [(json.dumps(o), o["order_id"]) for o in orders] + junk)
    min_amount = 10.0
    expected = sorted(
        (o["customer"], json.dumps({"order_id": o["order_id"], "customer": o["customer"],
                                    "amount_cents": round(o["amount"] * 100),
                                    "source_shard": r["ShardId"], "source_sequence": r["SequenceNumber"]},
                                   sort_keys=True))
        for o, r in zip(orders, landed) if o["status"] == "paid" and o["amount"] >= min_amount)
    assert 5 < len(expected) < len(orders)

    stdout = _run_example("kinesis_to_kinesis.py", *_common_args(kinesis_mock_server, source, tmp_path),
                          "--output", target, "--min-amount", str(min_amount))

    written = sorted((r["partition_key"], json.dumps(json.loads(r["data"]), sort_keys=True))
                     for r in streams.read_all(kinesis, target))
    assert written == expected
    assert _records_in_progress_lines(stdout, "kinesis_to_kinesis") == len(orders) + len(junk)


@pytest.mark.full  # the example's connector read is the streaming reads' of make test; the windows are Spark's
def test_windowed_aggregation(spark, kinesis_mock_server, stream_name, tmp_path):
    kinesis = streams.client(kinesis_mock_server)
    streams.create_stream(kinesis, stream_name, 2)
    records = [(f"reading-{i}-" + "z" * (i % 9), f"sensor-{i % 3}") for i in range(45)]
    streams.put_records(kinesis, stream_name, records[:25])
    streams.put_records(kinesis, stream_name, records[25:])
    window_ms = 10_000
    expected = defaultdict(lambda: [0, 0])
    for r in streams.read_all(kinesis, stream_name):
        arrival_ms = int(r["arrival_timestamp"].timestamp() * 1000)
        cell = expected[(arrival_ms - arrival_ms % window_ms, r["partition_key"])]
        cell[0] += 1
        cell[1] += len(r["data"])
    output = tmp_path / "windows"

    stdout = _run_example("windowed_aggregation.py", *_common_args(kinesis_mock_server, stream_name, tmp_path),
                          "--output", str(output), "--window", "10 seconds", "--watermark", "20 seconds",
                          "--shuffle-partitions", "2")

    rows = spark.read.parquet(str(output)).selectExpr(
        "unix_millis(window_start) AS start_ms", "unix_millis(window_end) - unix_millis(window_start) AS length_ms",
        "partitionKey", "records", "bytes", "batch_id").collect()
    latest = {}
    for row in sorted(rows, key=lambda r: r.batch_id):  # the newest row of a window is its current value
        assert row.length_ms == window_ms
        latest[(row.start_ms, row.partitionKey)] = [row.records, row.bytes]
    assert latest == dict(expected)
    assert sum(v[0] for v in latest.values()) == len(records)
    assert _records_in_progress_lines(stdout, "windowed_aggregation") == len(records)
    assert re.search(r"^\[windowed_aggregation\]   \d{4}-\d\d-\d\d \d\d:\d\d:\d\d-\d\d:\d\d:\d\d UTC sensor-\d: ",
                     stdout, re.MULTILINE), stdout


@pytest.mark.compat
@pytest.mark.skipif(pyspark_line() >= (4, 2), reason="this PySpark takes trigger(realTime=...)")
def test_pyspark_before_4_2_has_no_real_time_trigger(spark):
    """As docs/source.md says: PySpark takes trigger(realTime=...) from 4.2 on; before, it raises TypeError (on 4.1
    examples/example_support.py sets the trigger through the JVM, which test_real_time runs)."""
    writer = spark.readStream.format("rate").load().writeStream
    with pytest.raises(TypeError, match="realTime"):
        writer.trigger(realTime="5 minutes")


@pytest.mark.compat
@pytest.mark.skipif(pyspark_line() < (4, 1), reason="real-time mode needs Spark 4.1 or later")
def test_real_time(kinesis_mock_server, stream_name, tmp_path):
    """The real-time pipeline copies every record with its input arrival time, and prints each batch's latency."""
    kinesis = streams.client(kinesis_mock_server)
    source, target = f"{stream_name}-in", f"{stream_name}-out"
    streams.create_stream(kinesis, source, 2)
    streams.create_stream(kinesis, target, 1)
    records = [(f"click-{i}", f"user-{i % 7}") for i in range(60)]
    landed = streams.put_records(kinesis, source, records)
    arrivals = {(r["shard_id"], r["sequence_number"]): r["arrival_timestamp"]
                for r in streams.read_all(kinesis, source)}

    stdout = _run_example("real_time.py", "--stream", source, "--output", target, "--region", streams.REGION,
                          "--endpoint-url", kinesis_mock_server.endpoint, "--checkpoint", str(tmp_path / "rt"),
                          "--max-records", str(len(records)), "--option", "minFetchPeriod=50ms",
                          # A task slot for each input shard for the whole batch, and more for the monitor.
                          master="local[4]")

    written = [(r["partition_key"], json.loads(r["data"])) for r in streams.read_all(kinesis, target)]
    assert sorted((key, out["data"]) for key, out in written) == sorted((key, data) for data, key in records)
    by_record = {(r["ShardId"], r["SequenceNumber"]) for r in landed}
    assert {(out["source_shard"], out["source_sequence"]) for _, out in written} == by_record
    for _, out in written:
        expected_ms = round(arrivals[(out["source_shard"], out["source_sequence"])].timestamp() * 1000)
        assert out["in_arrival_ms"] == expected_ms
    lines = [line for line in stdout.splitlines() if line.startswith("[real_time] batch ")]
    assert lines and all("latency p50" in line for line in lines), stdout
    assert f"[real_time] done: {len(records)} records passed through" in stdout, stdout
