"""Exactly-once streaming reads under crashes, replays and task retries (issue 3, "Done when" 1, 2 and 4).

Every query here runs in its own driver process (tests/drivers/streaming_driver.py, run by
``harness.streaming.Driver``), started in a new session so the test can SIGKILL the whole driver (Python, the JVM
and its Python workers) with one ``os.killpg`` and restart it from its checkpoint. Records carry a global id, a key
(also the partition key) and a per-key sequence number, so the output can be checked for loss, duplicates and
per-key order.

The default run is short enough for CI. ``SPARK_KINESIS_LONG=1`` selects a longer crash test (more records, more
kills); ``SPARK_KINESIS_SEED`` changes the seed of the kill points and the writer's keys.
"""

from __future__ import annotations

import collections
import json
import os
import random
import time
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from conftest import connector_options
from harness import checkpoint as spark_log
from harness import streams
from harness.cluster_fixtures import cluster_conf
from harness.streaming import (  # noqa: F401 (drivers is a fixture)
    STREAMING_DRIVER, Writer, assert_exactly_once_from_replays, drivers, expect_ids, order_violations, put_ids,
    sink_rows,
)

LONG = os.environ.get("SPARK_KINESIS_LONG") == "1"
SEED = int(os.environ.get("SPARK_KINESIS_SEED", "20261122"))

# Done-when 1: crash test.
CRASH_RECORDS = 50_000 if LONG else 10_000
CRASH_KILLS = 10 if LONG else 3
EFO_CRASH_RECORDS = 20_000 if LONG else 5_000
CRASH_WRITE_SECONDS = 75.0 if LONG else 15.0  # pure writing time of all records (paused between runs)
SHARDS = 4
KEYS = 32
MAX_RECORDS_PER_TRIGGER = 700

# Done-when 2: replays.
REPLAY_RECORDS = 3_000
RETRY_RECORDS = 2_000
PROBE_ROWS = 40

# Done-when 4: latest pinned.
LATEST_BEFORE = 300
LATEST_AFTER_START = 500
LATEST_AFTER_CRASH = 500

DRIVER_START_TIMEOUT = 240.0  # bounds for a hang, not speeds: CI machines have been 2-3 times slower than ours
RUN_TIMEOUT = 360.0


# --------------------------------------------------------------------------------------------------------------
# The driver's config


def base_config(server, stream: str, workdir: Path, **source: object) -> dict:
    options = dict(connector_options(server), streamName=stream)
    options.update({k: str(v) for k, v in source.items()})
    return {
        "master": "local[2]",
        "source": options,
        "checkpoint": str(workdir / "checkpoint"),
        "output": str(workdir / "output"),
        "sink": "parquet",
        "max_seconds": RUN_TIMEOUT + 60,  # the test gives up first, with a jstack of the driver
    }


# --------------------------------------------------------------------------------------------------------------
# Done when 1: exactly-once across crashes


@pytest.mark.compat
@pytest.mark.heavy
def test_exactly_once_across_driver_crashes(spark, kinesalite_server, stream_name, tmp_path, drivers):
    """SIGKILL the whole driver CRASH_KILLS times while a writer runs; the output holds every id once, in key order."""
    crash_test(spark, kinesalite_server, stream_name, tmp_path, drivers, CRASH_RECORDS)


@pytest.mark.xdist_group("cluster")
def test_exactly_once_across_driver_crashes_efo_on_a_cluster_with_splits_and_merges(
        spark, spark_cluster, kinesis_mock_server, stream_name, tmp_path, drivers):
    """The same with enhanced fan-out (consumerMode=efo) on kinesis-mock, the local server that serves it, on the
    standalone cluster (two executor JVMs), with a split and a merge while the writer runs: every run of the driver
    subscribes again with the consumer named after the checkpoint, the closed shards are read to their end and
    their children after them (kinesis-mock never signals a shard's end on a subscription), and the final
    AvailableNow run ends by itself."""
    crash_test(spark, kinesis_mock_server, stream_name, tmp_path, drivers, EFO_CRASH_RECORDS, cluster=spark_cluster,
               reshards=True, consumerMode="efo", shardDiscoveryInterval="1s")


def reshard_during(kinesis, stream: str, run: int) -> str:
    """Run 0: the first open shard split; run 1: the two last open shards merged (adjacent: both children of no
    split, or a split's upper child and the shard after it). Returns what was done."""
    listing = streams.list_shards(kinesis, stream)
    closed = {p for s in listing for p in (s.get("ParentShardId"), s.get("AdjacentParentShardId")) if p}
    open_shards = sorted((s for s in listing if s["ShardId"] not in closed),
                         key=lambda s: int(s["HashKeyRange"]["StartingHashKey"]))
    if run == 0:
        shard = open_shards[0]
        low, high = int(shard["HashKeyRange"]["StartingHashKey"]), int(shard["HashKeyRange"]["EndingHashKey"])
        kinesis.split_shard(StreamName=stream, ShardToSplit=shard["ShardId"], NewStartingHashKey=str((low + high) // 2))
        done = f"split {shard['ShardId']}"
    else:
        a, b = open_shards[-2], open_shards[-1]
        kinesis.merge_shards(StreamName=stream, ShardToMerge=a["ShardId"], AdjacentShardToMerge=b["ShardId"])
        done = f"merged {a['ShardId']} and {b['ShardId']}"
    streams.wait_active(kinesis, stream)
    return done


def crash_test(spark, server, stream_name: str, tmp_path: Path, drivers, records: int, cluster=None,
               reshards: bool = False, **source: object) -> None:
    """CRASH_KILLS driver SIGKILLs while a writer puts `records` records, then a final AvailableNow run; checks
    every id once, each row as written, per-key order and the batch sizes. `cluster`: the driver runs its query on
    that standalone cluster; `reshards`: a split in the first run and a merge in the second, while it runs."""
    kinesis = streams.client(server)
    streams.create_stream(kinesis, stream_name, SHARDS)
    rng = random.Random(SEED)
    writer = Writer(streams.client(server), stream_name, keys=KEYS, seed=SEED, resend_failed=False)
    config = base_config(server, stream_name, tmp_path, initialPosition="trim_horizon",
                         maxRecordsPerTrigger=MAX_RECORDS_PER_TRIGGER, **source)
    if cluster is not None:
        config.update(master=cluster.master_url, conf=cluster_conf(cluster, tmp_path / "events"))
    resharded = []
    checkpoint, output = Path(config["checkpoint"]), Path(config["output"])
    offsets, commits = checkpoint / "offsets", checkpoint / "commits"
    writer.start(records, chunk=100, seconds=CRASH_WRITE_SECONDS, allowance=0)
    kills = []

    def state() -> str:
        rows = sum(e.get("numInputRows", 0) for p in sorted(tmp_path.glob("status-run-*/events.jsonl"))
                   for e in map(json.loads, p.read_text().splitlines()) if e["event"] == "progress")
        return (f"(writer: {writer.written} written of {writer.allowance} allowed, error {writer.error!r}; "
                f"offsets {spark_log.batch_ids(offsets)}, commits {spark_log.batch_ids(commits)}, "
                f"rows in progress events {rows})")
    try:
        # Each run's share of the records is released once its query runs, so records are being written when
        # the kill comes. The second kill (and every third after it) waits for a batch in flight: its offsets
        # are in the log, its commit is not. The others come at a random time after the run's first new commit.
        for n in range(CRASH_KILLS):
            mid_batch = n % 3 == 1
            committed_before = spark_log.last_batch(commits)
            d = drivers(f"run-{n}", STREAMING_DRIVER, dict(config, trigger={"processingTime": "500 milliseconds"}))
            d.await_started(DRIVER_START_TIMEOUT)
            writer.allow((n + 1) * records // CRASH_KILLS)
            d.wait_until(lambda: spark_log.last_batch(commits) > committed_before, DRIVER_START_TIMEOUT,
                         f"a new committed batch in run {n}", context=state)
            if reshards and n < 2:
                resharded.append(reshard_during(kinesis, stream_name, n))
                committed_before = spark_log.last_batch(commits)
                d.wait_until(lambda: spark_log.last_batch(commits) > committed_before, DRIVER_START_TIMEOUT,
                             f"a committed batch after the reshard in run {n}", context=state)
            if mid_batch:
                d.wait_until(lambda: spark_log.last_batch(offsets) > spark_log.last_batch(commits), 60,
                             f"a batch in flight in run {n}", interval=0.01, context=state)
            else:
                delay = rng.uniform(0.0, 4.0)
                deadline = time.monotonic() + delay
                while time.monotonic() < deadline and d.alive():
                    time.sleep(0.02)
                assert d.alive(), f"driver run {n} exited early:\n{d.log_tail()}"
            d.kill()
            kills.append({"run": n, "mid_batch_wanted": mid_batch, "offsets": spark_log.last_batch(offsets),
                          "commits": spark_log.last_batch(commits), "written": writer.written})
        writer.allow(records)
        writer.join(timeout=CRASH_WRITE_SECONDS + 120)
        writer.check_own_order(resharded=reshards)

        final = d.restart("final", trigger={"availableNow": True})
        code = final.wait(RUN_TIMEOUT)
        assert code == 0, f"the final AvailableNow run exited with {code}:\n{final.log_tail()}"
    finally:
        writer.stop()

    print(f"kills: {kills}; reshards: {resharded}")
    in_flight = [k for k in kills if k["offsets"] > k["commits"]]
    assert any(k["mid_batch_wanted"] for k in in_flight), f"no kill hit a batch in flight: {kills}"

    rows = sink_rows(spark, output)
    expect_ids((r["id"] for r in rows), range(records))

    # Each row is the record the writer put there: same shard, sequence number, key and per-key seq.
    wrong = [(r["id"], (r["shardId"], r["sequenceNumber"], r["partitionKey"], r["seq"]), writer.acks[r["id"]])
             for r in rows if (r["shardId"], r["sequenceNumber"], r["partitionKey"], r["seq"]) != writer.acks[r["id"]]]
    assert not wrong, f"{len(wrong)} rows differ from what was written, e.g. {wrong[:5]}"

    bad = order_violations(rows)
    assert not bad, f"{len(bad)} per-key order violations, e.g.\n" + "\n".join(bad[:10])

    sizes = collections.Counter(r["batch"] for r in rows)
    assert max(sizes.values()) <= MAX_RECORDS_PER_TRIGGER, sizes
    assert len(sizes) >= records // MAX_RECORDS_PER_TRIGGER, f"only {len(sizes)} batches: {sizes}"


# --------------------------------------------------------------------------------------------------------------
# Done when 2: replays read the same data


def test_foreach_batch_two_actions_see_identical_rows(kinesalite_server, stream_name, tmp_path, drivers):
    """Two collects and a count of each foreachBatch DataFrame agree, while a writer keeps adding records."""
    kinesis = streams.client(kinesalite_server)
    streams.create_stream(kinesis, stream_name, SHARDS)
    writer = Writer(streams.client(kinesalite_server), stream_name, keys=KEYS, seed=SEED + 1, resend_failed=False)
    config = base_config(kinesalite_server, stream_name, tmp_path, initialPosition="trim_horizon",
                         maxRecordsPerTrigger=300)
    config.update(sink="foreach_batch_twice", trigger={})
    output = Path(config["output"])

    def results() -> List[dict]:
        return [json.loads(p.read_text()) for p in sorted(output.glob("batch-*.json"))] if output.is_dir() else []

    def seen_ids() -> set:
        return {row[0] for r in results() for row in r["rows"]}

    d = drivers("foreach-batch", STREAMING_DRIVER, config)
    d.await_started(DRIVER_START_TIMEOUT)
    writer.start(REPLAY_RECORDS, chunk=50, seconds=10.0)
    try:
        writer.join(timeout=120)
        d.wait_until(lambda: len(seen_ids()) >= REPLAY_RECORDS, 120, "every record in a batch", interval=0.2)
    finally:
        writer.stop()
        d.kill()

    batches = results()
    differing = [(r["batch"], r["first"], r["count"], r["second"], r["mismatches"])
                 for r in batches if not r["identical"]]
    mismatches = sum(r["mismatches"] for r in batches)
    assert mismatches == 0 and not differing, f"batches whose actions disagree (batch, rows, count, rows, diff): " \
                                              f"{differing}"
    assert len(batches) >= 3, f"only {len(batches)} batches"
    expect_ids((row[0] for r in batches for row in r["rows"]), range(REPLAY_RECORDS))


def test_task_retries_read_the_same_range(spark, kinesalite_server, stream_name, tmp_path, drivers):
    """The first attempt of one task per batch fails after PROBE_ROWS rows; the retry reads the same rows.

    Spark does not speculate in local mode (TaskSchedulerImpl starts the speculation thread only when the master
    is not local), so a retried task is the replay local mode can produce; `local[2,3]` allows 3 attempts.
    """
    kinesis = streams.client(kinesalite_server)
    streams.create_stream(kinesis, stream_name, SHARDS)
    writer = Writer(kinesis, stream_name, keys=KEYS, seed=SEED + 2, resend_failed=False)
    writer.start(RETRY_RECORDS, chunk=500)
    writer.join(timeout=60)
    markers = tmp_path / "markers"
    config = base_config(kinesalite_server, stream_name, tmp_path, initialPosition="trim_horizon",
                         maxRecordsPerTrigger=MAX_RECORDS_PER_TRIGGER)
    config.update(master="local[2,3]", trigger={"availableNow": True},
                  probe={"rows": PROBE_ROWS, "partition": 0, "action": "fail", "markers": str(markers)})
    d = drivers("retries", STREAMING_DRIVER, config)
    code = d.wait(RUN_TIMEOUT)
    assert code == 0, f"driver exited with {code}:\n{d.log_tail()}"

    attempts = [json.loads(p.read_text()) for p in markers.glob("*.json")]
    by_task: Dict[Tuple[int, int], Dict[int, list]] = collections.defaultdict(dict)
    for m in attempts:
        by_task[(m["stage"], m["partition"])][m["attempt"]] = m["rows"]
    retried = {t: a for t, a in by_task.items() if 0 in a}
    assert len(retried) >= 2, f"expected a failed first attempt in several batches, got {sorted(by_task)}"
    for task, runs in sorted(retried.items()):
        assert 1 in runs, f"task {task} failed in attempt 0 but no retry reached {PROBE_ROWS} rows: {sorted(runs)}"
        assert runs[1] == runs[0], f"task {task}: the retry read other rows than the first attempt"

    assert_exactly_once_from_replays(spark, Path(config["output"]), range(RETRY_RECORDS), "retried task")


# --------------------------------------------------------------------------------------------------------------
# Done when 4: `latest` is pinned before the first batch


@pytest.mark.parametrize("crash_point", ["before_offsets_logged", "batch0_in_flight"])
def test_latest_is_pinned_across_a_crash_before_the_first_commit(spark, kinesis_mock_server, stream_name, tmp_path,
                                                                 drivers, crash_point):
    """Start at `latest`, write, SIGKILL before batch 0 commits, write more, restart: all of it arrives once.

    Spark plans batch 0 in the query's first trigger whatever the source has, so "before the first commit" has two
    places to die. before_offsets_logged: the records are written as soon as the start is pinned and the driver
    dies right after, normally while the first trigger is still asking the source for its latest offset, so
    nothing is in the offset log and the restart must take its start from the pinned file (if batch 0 was logged
    anyway, the run says so and is weaker). batch0_in_flight: the driver dies as soon as batch 0's offsets are
    logged, before its commit, so the restart re-runs batch 0 from the pinned start.

    kinesis-mock, not kinesalite: `latest` is pinned as AT_TIMESTAMP, and kinesalite never answers
    GetShardIterator AT_TIMESTAMP on a shard with no record at or after the timestamp.
    """
    kinesis = streams.client(kinesis_mock_server)
    streams.create_stream(kinesis, stream_name, SHARDS)
    before = range(0, LATEST_BEFORE)
    after_start = range(LATEST_BEFORE, LATEST_BEFORE + LATEST_AFTER_START)
    after_crash = range(after_start.stop, after_start.stop + LATEST_AFTER_CRASH)
    put_ids(kinesis_mock_server, stream_name, before, "b")

    config = base_config(kinesis_mock_server, stream_name, tmp_path, initialPosition="latest")
    checkpoint = Path(config["checkpoint"])
    pinned = checkpoint / "sources" / "0" / "kinesis-initial-offset.json"
    offsets, commits = checkpoint / "offsets", checkpoint / "commits"

    d = drivers("first", STREAMING_DRIVER, dict(config, trigger={}))
    d.wait_until(pinned.exists, DRIVER_START_TIMEOUT, "the pinned start", interval=0.01)
    put_ids(kinesis_mock_server, stream_name, after_start, "s")
    if crash_point == "batch0_in_flight":
        d.wait_until(lambda: 0 in spark_log.batch_ids(offsets), 60, "batch 0's offsets", interval=0.01)
    d.kill()
    at_kill = {"offsets": spark_log.batch_ids(offsets), "commits": spark_log.batch_ids(commits)}
    print(f"{crash_point}: at the kill {at_kill}")
    if crash_point == "batch0_in_flight":
        assert 0 not in at_kill["commits"], f"batch 0 committed before the kill landed: {at_kill}"
    pinned_text = pinned.read_text()
    assert '"at_timestamp"' in pinned_text, f"`latest` is not pinned as a timestamp: {pinned_text}"

    put_ids(kinesis_mock_server, stream_name, after_crash, "c")
    restart = d.restart("restart", trigger={"availableNow": True})
    code = restart.wait(RUN_TIMEOUT)
    assert code == 0, f"the restart exited with {code}:\n{restart.log_tail()}"
    assert pinned.read_text() == pinned_text, "the restart moved the pinned start"

    rows = sink_rows(spark, Path(config["output"]))
    expect_ids((r["id"] for r in rows), list(after_start) + list(after_crash))
