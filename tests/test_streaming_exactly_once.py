"""Exactly-once streaming reads under crashes, replays and task retries (issue 3, "Done when" 1, 2 and 4).

Every query here runs in its own driver process (tests/streaming_driver.py), started in a new session so the test
can SIGKILL the whole driver (Python, the JVM and its Python workers) with one ``os.killpg`` and restart it from
its checkpoint. Records carry a global id, a key (also the partition key) and a per-key sequence number, so the
output can be checked for loss, duplicates and per-key order.

The default run is short enough for CI. ``SPARK_KINESIS_LONG=1`` selects a longer crash test (more records, more
kills); ``SPARK_KINESIS_SEED`` changes the seed of the kill points and the writer's keys.
"""

from __future__ import annotations

import collections
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional, Tuple

import pytest

from conftest import connector_options
from harness import streams

LONG = os.environ.get("SPARK_KINESIS_LONG") == "1"
SEED = int(os.environ.get("SPARK_KINESIS_SEED", "20261122"))

# Done-when 1: crash test.
CRASH_RECORDS = 50_000 if LONG else 10_000
CRASH_KILLS = 10 if LONG else 3
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

DRIVER = Path(__file__).resolve().with_name("streaming_driver.py")
COMPACT_INTERVAL = "1000000"  # streaming_driver.py turns file sink log compaction off with this value
DRIVER_START_TIMEOUT = 120.0
RUN_TIMEOUT = 180.0
KILL_TIMEOUT = 30.0


# --------------------------------------------------------------------------------------------------------------
# The driver subprocess


class Driver:
    """One run of tests/streaming_driver.py in its own process group."""

    def __init__(self, workdir: Path, name: str, config: dict):
        self.name = name
        self.workdir = workdir
        self.status = workdir / f"status-{name}"
        self.log_path = workdir / f"{name}.log"
        config = dict(config, status=str(self.status))
        config_path = workdir / f"{name}.json"
        config_path.write_text(json.dumps(config, indent=1))
        env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", AWS_EC2_METADATA_DISABLED="true",
                   PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen([sys.executable, str(DRIVER), str(config_path)], stdout=self._log,
                                     stderr=subprocess.STDOUT, env=env, start_new_session=True,
                                     cwd=str(workdir))
        self.pgid = self.proc.pid  # start_new_session: the child leads its own process group
        self.killed = False

    def alive(self) -> bool:
        return self.proc.poll() is None

    def log_tail(self, chars: int = 4000) -> str:
        if not self._log.closed:
            self._log.flush()
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return text[-chars:]

    def events(self) -> List[dict]:
        path = self.status / "events.jsonl"
        if not path.exists():
            return []
        lines = path.read_text().splitlines()
        return [json.loads(line) for line in lines if line.strip().endswith("}")]

    def deadlocks(self) -> str:
        """What jstack says about Java-level deadlocks in the driver's JVM ("" when none or no jstack)."""
        try:
            pids = subprocess.run(["pgrep", "-g", str(self.pgid), "java"], capture_output=True, text=True,
                                  timeout=10).stdout.split()
            found = []
            for pid in pids:
                dump = subprocess.run(["jstack", pid], capture_output=True, text=True, timeout=30).stdout
                if "Found one Java-level deadlock" in dump:
                    section = dump[dump.index("Found one Java-level deadlock"):]
                    found.append("\n".join(line for line in section.splitlines()
                                           if not line.strip().startswith(("at java.", "at scala.")))[:6000])
            return "\n".join(found)
        except (OSError, subprocess.SubprocessError):
            return ""

    def started(self) -> bool:
        return (self.status / "started.json").exists()

    def kill(self) -> None:
        """SIGKILL to the whole process group, then wait until every process in it is gone."""
        if not self.killed:
            self.killed = True
            try:
                os.killpg(self.pgid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            self.proc.wait(timeout=KILL_TIMEOUT)
        finally:
            self._log.close()
        deadline = time.monotonic() + KILL_TIMEOUT
        while True:
            try:
                os.killpg(self.pgid, 0)
            except ProcessLookupError:
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"process group {self.pgid} of driver {self.name} still has processes")
            time.sleep(0.05)

    def wait(self, timeout: float) -> int:
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            tail = self.log_tail()
            deadlock = self.deadlocks()
            if deadlock:
                tail += f"\n\nthe driver's JVM is deadlocked (jstack):\n{deadlock}"
            self.kill()
            raise AssertionError(f"driver {self.name} did not end within {timeout:.0f} s; log tail:\n{tail}")
        finally:
            if not self._log.closed:
                self._log.close()


@pytest.fixture
def drivers(tmp_path):
    """Starts drivers for a test and SIGKILLs whatever is still running at its end (only the groups it started)."""
    started: List[Driver] = []

    def start(name: str, config: dict) -> Driver:
        d = Driver(tmp_path, name, config)
        started.append(d)
        return d

    yield start
    for d in started:
        if d.alive():
            try:
                d.kill()
            except Exception:  # noqa: BLE001 - best effort; the test already reported its own failure
                pass
        elif not d._log.closed:
            d._log.close()


def wait_for(condition: Callable[[], bool], timeout: float, what: str, driver: Optional[Driver] = None,
             poll: float = 0.05, context: Callable[[], str] = lambda: "") -> None:
    """Polls `condition` until it holds; fails after `timeout`, or at once if `driver` exited."""
    deadline = time.monotonic() + timeout
    while not condition():
        if driver is not None and not driver.alive():
            if condition():
                return
            raise AssertionError(f"driver {driver.name} exited with {driver.proc.returncode} while waiting for "
                                 f"{what} {context()}; log tail:\n{driver.log_tail()}")
        if time.monotonic() > deadline:
            tail = ""
            if driver is not None:
                tail = f"; log tail of {driver.name}:\n{driver.log_tail()}"
                deadlock = driver.deadlocks()
                if deadlock:
                    tail += f"\n\nthe driver's JVM is deadlocked (jstack):\n{deadlock}"
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what} {context()}{tail}")
        time.sleep(poll)


def batch_ids(folder: Path) -> List[int]:
    """The batch ids of a Spark log folder (offsets/, commits/, _spark_metadata/)."""
    if not folder.is_dir():
        return []
    return sorted(int(p.name) for p in folder.iterdir() if p.name.isdigit())


def last_id(folder: Path) -> int:
    ids = batch_ids(folder)
    return ids[-1] if ids else -1


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
# Records and the writer


def record(i: int, key: str, seq: int) -> Tuple[str, str]:
    return json.dumps({"id": i, "key": key, "seq": seq}), key


class Writer(threading.Thread):
    """Writes ids [first, first + count) with PutRecords (all of them in about `seconds` of writing, while the
    `allowance` lets it), remembering where each one landed.

    Each PutRecords call must accept every entry: re-sending failed entries after later ones could reorder a
    key, which would make a per-key order check blame the connector for the writer's doing.
    """

    def __init__(self, server, stream: str, count: int, seconds: float, seed: int, first: int = 0,
                 chunk: int = 100, keys: int = KEYS, allowance: Optional[int] = None):
        super().__init__(name=f"writer-{stream}", daemon=True)
        self.server, self.stream, self.count, self.seconds = server, stream, count, seconds
        self.first, self.chunk, self.keys = first, chunk, keys
        self.rng = random.Random(seed)
        self.per_key: Dict[str, int] = collections.defaultdict(int)
        self.acks: Dict[int, Tuple[str, str, str, int]] = {}  # id -> (shardId, sequenceNumber, key, seq)
        self.error: Optional[BaseException] = None
        self.stop_event = threading.Event()
        self.written = 0
        # How many records the writer may have written so far (the crash test releases them run by run).
        self.allowance = count if allowance is None else allowance
        self._allowance_changed = threading.Condition()

    def allow(self, n: int) -> None:
        with self._allowance_changed:
            self.allowance = max(self.allowance, min(n, self.count))
            self._allowance_changed.notify_all()

    def _wait_for_allowance(self) -> bool:
        with self._allowance_changed:
            while self.written >= self.allowance and not self.stop_event.is_set():
                self._allowance_changed.wait(0.2)
        return not self.stop_event.is_set()

    def run(self) -> None:
        try:
            kinesis = streams.client(self.server)
            for base in range(self.first, self.first + self.count, self.chunk):
                if not self._wait_for_allowance():
                    return
                chunk_started = time.monotonic()
                ids = range(base, min(base + self.chunk, self.first + self.count))
                entries, meta = [], []
                for i in ids:
                    key = f"k{self.rng.randrange(self.keys)}"
                    seq = self.per_key[key]
                    self.per_key[key] += 1
                    data, pk = record(i, key, seq)
                    entries.append({"Data": data.encode(), "PartitionKey": pk})
                    meta.append((i, key, seq))
                response = kinesis.put_records(StreamName=self.stream, Records=entries)
                if response.get("FailedRecordCount"):
                    raise RuntimeError(f"PutRecords rejected {response['FailedRecordCount']} entries; the writer "
                                       "does not re-send them because that could reorder a key")
                for (i, key, seq), result in zip(meta, response["Records"]):
                    self.acks[i] = (result["ShardId"], result["SequenceNumber"], key, seq)
                self.written += len(entries)
                pause = chunk_started + self.seconds * len(entries) / self.count - time.monotonic()
                if pause > 0:
                    self.stop_event.wait(pause)
        except BaseException as e:  # noqa: BLE001 - reported by finish()
            self.error = e

    def finish(self, timeout: float) -> None:
        self.join(timeout)
        assert not self.is_alive(), f"writer did not finish within {timeout:.0f} s ({self.written} written)"
        if self.error is not None:
            raise AssertionError(f"writer failed: {self.error!r}") from self.error
        assert len(self.acks) == self.count

    def check_own_order(self) -> None:
        """Harness precondition: in Kinesis, each key's records are in `seq` order on one shard."""
        by_key: Dict[str, List[Tuple[int, str, int]]] = collections.defaultdict(list)
        for shard, sequence, key, seq in self.acks.values():
            by_key[key].append((seq, shard, int(sequence)))
        for key, items in by_key.items():
            items.sort()
            assert len({shard for _, shard, _ in items}) == 1, f"key {key} landed on several shards"
            sequences = [s for _, _, s in items]
            assert sequences == sorted(sequences), f"the writer's own records of key {key} are out of order"


def put_ids(server, stream: str, ids: Iterable[int], tag: str) -> None:
    streams.put_records(streams.client(server), stream,
                        [record(i, f"{tag}{i % 7}", i) for i in ids])


# --------------------------------------------------------------------------------------------------------------
# Reading what a Parquet file sink committed


def sink_batches(output: Path) -> Dict[str, int]:
    """File name -> batch id, from the file sink's log (<output>/_spark_metadata/<batchId>)."""
    log = output / "_spark_metadata"
    compacted = sorted(p.name for p in log.iterdir() if p.name.endswith(".compact"))
    assert not compacted, f"the sink log was compacted ({compacted}); files cannot be mapped to batches"
    files: Dict[str, int] = {}
    for batch in batch_ids(log):
        lines = (log / str(batch)).read_text().splitlines()
        assert lines and lines[0].startswith("v"), f"unexpected sink log file {batch}: {lines[:1]}"
        for line in lines[1:]:
            if not line.strip():
                continue
            entry = json.loads(line)
            if entry.get("action", "add") != "add":
                continue
            name = entry["path"].rsplit("/", 1)[-1]
            assert name not in files, f"{name} is listed by batches {files[name]} and {batch}"
            files[name] = batch
    return files


def sink_rows(spark, output: Path) -> List[dict]:
    """Every committed row (Spark honours _spark_metadata), with the batch that wrote it."""
    files = sink_batches(output)
    # The reader expects compacted log files at the compact interval of its own session: use the driver's.
    key = "spark.sql.streaming.fileSink.log.compactInterval"
    previous = spark.conf.get(key, None)
    spark.conf.set(key, COMPACT_INTERVAL)
    try:
        df = spark.read.parquet(str(output)).selectExpr("*", "_metadata.file_name AS file_name")
        rows = [r.asDict() for r in df.collect()]
    finally:
        if previous is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, previous)
    for r in rows:
        assert r["file_name"] in files, f"{r['file_name']} is read but not in the sink log"
        r["batch"] = files[r["file_name"]]
    return rows


def exactly_once_report(ids: Iterable[int], expected: Iterable[int]) -> List[str]:
    """Problems with `ids` against `expected` (each expected id exactly once), as readable lines."""
    counts = collections.Counter(ids)
    expected = set(expected)
    problems = []
    duplicated = sorted(i for i, n in counts.items() if n > 1)
    missing = sorted(expected - set(counts))
    unexpected = sorted(set(counts) - expected)
    if duplicated:
        problems.append(f"{len(duplicated)} ids delivered more than once, e.g. "
                        f"{[(i, counts[i]) for i in duplicated[:10]]}")
    if missing:
        problems.append(f"{len(missing)} ids missing, e.g. {missing[:10]}")
    if unexpected:
        problems.append(f"{len(unexpected)} ids not expected, e.g. {unexpected[:10]}")
    return problems


def order_violations(rows: List[dict]) -> List[str]:
    """Per key: rows ordered by (batch, sequence number, sub-sequence) must have strictly increasing `seq`."""
    by_key: Dict[str, List[dict]] = collections.defaultdict(list)
    for r in rows:
        by_key[r["key"]].append(r)
    bad = []
    for key, items in sorted(by_key.items()):
        items.sort(key=lambda r: (r["batch"], int(r["sequenceNumber"]), r["subSequenceNumber"]))
        for a, b in zip(items, items[1:]):
            if not b["seq"] > a["seq"]:
                bad.append(f"key {key}: seq {a['seq']} (batch {a['batch']}, id {a['id']}) then seq {b['seq']} "
                           f"(batch {b['batch']}, id {b['id']})")
    return bad


def assert_exactly_once_from_replays(spark, output: Path, expected: Iterable[int], replay: str) -> None:
    """The sink at `output` holds every id of `expected` once, in key order, and some rows come from a replayed task
    attempt (`replay` names it in the message: "retried task", "speculative copy")."""
    rows = sink_rows(spark, output)
    problems = exactly_once_report((r["id"] for r in rows), expected)
    assert not problems, "\n".join(problems)
    assert any(r["attempt"] > 0 for r in rows), f"no committed row came from a {replay}"
    bad = order_violations(rows)
    assert not bad, f"{len(bad)} per-key order violations, e.g.\n" + "\n".join(bad[:10])


# --------------------------------------------------------------------------------------------------------------
# Done when 1: exactly-once across crashes


def test_exactly_once_across_driver_crashes(spark, kinesalite_server, stream_name, tmp_path, drivers):
    """SIGKILL the whole driver CRASH_KILLS times while a writer runs; the output holds every id once, in key order."""
    kinesis = streams.client(kinesalite_server)
    streams.create_stream(kinesis, stream_name, SHARDS)
    rng = random.Random(SEED)
    writer = Writer(kinesalite_server, stream_name, CRASH_RECORDS, CRASH_WRITE_SECONDS, seed=SEED, allowance=0)
    config = base_config(kinesalite_server, stream_name, tmp_path, initialPosition="trim_horizon",
                         maxRecordsPerTrigger=MAX_RECORDS_PER_TRIGGER)
    checkpoint, output = Path(config["checkpoint"]), Path(config["output"])
    offsets, commits = checkpoint / "offsets", checkpoint / "commits"
    writer.start()
    kills = []

    def state() -> str:
        rows = sum(e.get("numInputRows", 0) for p in sorted(tmp_path.glob("status-run-*/events.jsonl"))
                   for e in map(json.loads, p.read_text().splitlines()) if e["event"] == "progress")
        return (f"(writer: {writer.written} written of {writer.allowance} allowed, error {writer.error!r}; "
                f"offsets {batch_ids(offsets)}, commits {batch_ids(commits)}, rows in progress events {rows})")
    try:
        # Each run's share of the records is released once its query runs, so records are being written when
        # the kill comes. The second kill (and every third after it) waits for a batch in flight: its offsets
        # are in the log, its commit is not. The others come at a random time after the run's first new commit.
        for n in range(CRASH_KILLS):
            mid_batch = n % 3 == 1
            committed_before = last_id(commits)
            d = drivers(f"run-{n}", dict(config, trigger={"processingTime": "500 milliseconds"}))
            wait_for(d.started, DRIVER_START_TIMEOUT, f"the query of run {n} to start", d)
            writer.allow((n + 1) * CRASH_RECORDS // CRASH_KILLS)
            wait_for(lambda: last_id(commits) > committed_before, DRIVER_START_TIMEOUT,
                     f"a new committed batch in run {n}", d, context=state)
            if mid_batch:
                wait_for(lambda: last_id(offsets) > last_id(commits), 60, f"a batch in flight in run {n}", d,
                         poll=0.01, context=state)
            else:
                delay = rng.uniform(0.0, 4.0)
                deadline = time.monotonic() + delay
                while time.monotonic() < deadline and d.alive():
                    time.sleep(0.02)
                assert d.alive(), f"driver run {n} exited early:\n{d.log_tail()}"
            d.kill()
            kills.append({"run": n, "mid_batch_wanted": mid_batch, "offsets": last_id(offsets),
                          "commits": last_id(commits), "written": writer.written})
        writer.allow(CRASH_RECORDS)
        writer.finish(timeout=CRASH_WRITE_SECONDS + 120)
        writer.check_own_order()

        final = drivers("final", dict(config, trigger={"availableNow": True}))
        code = final.wait(RUN_TIMEOUT)
        assert code == 0, f"the final AvailableNow run exited with {code}:\n{final.log_tail()}"
    finally:
        writer.stop_event.set()

    print(f"kills: {kills}")
    in_flight = [k for k in kills if k["offsets"] > k["commits"]]
    assert any(k["mid_batch_wanted"] for k in in_flight), f"no kill hit a batch in flight: {kills}"

    rows = sink_rows(spark, output)
    problems = exactly_once_report((r["id"] for r in rows), range(CRASH_RECORDS))
    assert not problems, "\n".join(problems)

    # Each row is the record the writer put there: same shard, sequence number, key and per-key seq.
    wrong = [(r["id"], (r["shardId"], r["sequenceNumber"], r["partitionKey"], r["seq"]), writer.acks[r["id"]])
             for r in rows if (r["shardId"], r["sequenceNumber"], r["partitionKey"], r["seq"]) != writer.acks[r["id"]]]
    assert not wrong, f"{len(wrong)} rows differ from what was written, e.g. {wrong[:5]}"

    bad = order_violations(rows)
    assert not bad, f"{len(bad)} per-key order violations, e.g.\n" + "\n".join(bad[:10])

    sizes = collections.Counter(r["batch"] for r in rows)
    assert max(sizes.values()) <= MAX_RECORDS_PER_TRIGGER, sizes
    assert len(sizes) >= CRASH_RECORDS // MAX_RECORDS_PER_TRIGGER, f"only {len(sizes)} batches: {sizes}"


# --------------------------------------------------------------------------------------------------------------
# Done when 2: replays read the same data


def test_foreach_batch_two_actions_see_identical_rows(kinesalite_server, stream_name, tmp_path, drivers):
    """Two collects and a count of each foreachBatch DataFrame agree, while a writer keeps adding records."""
    kinesis = streams.client(kinesalite_server)
    streams.create_stream(kinesis, stream_name, SHARDS)
    writer = Writer(kinesalite_server, stream_name, REPLAY_RECORDS, seconds=10.0, seed=SEED + 1, chunk=50)
    config = base_config(kinesalite_server, stream_name, tmp_path, initialPosition="trim_horizon",
                         maxRecordsPerTrigger=300)
    config.update(sink="foreach_batch_twice", trigger={})
    output = Path(config["output"])

    def results() -> List[dict]:
        return [json.loads(p.read_text()) for p in sorted(output.glob("batch-*.json"))] if output.is_dir() else []

    def seen_ids() -> set:
        return {row[0] for r in results() for row in r["rows"]}

    d = drivers("foreach-batch", config)
    wait_for(d.started, DRIVER_START_TIMEOUT, "the query to start", d)
    writer.start()
    try:
        writer.finish(timeout=120)
        wait_for(lambda: len(seen_ids()) >= REPLAY_RECORDS, 120, "every record in a batch", d, poll=0.2)
    finally:
        writer.stop_event.set()
        d.kill()

    batches = results()
    differing = [(r["batch"], r["first"], r["count"], r["second"], r["mismatches"])
                 for r in batches if not r["identical"]]
    mismatches = sum(r["mismatches"] for r in batches)
    assert mismatches == 0 and not differing, f"batches whose actions disagree (batch, rows, count, rows, diff): " \
                                              f"{differing}"
    assert len(batches) >= 3, f"only {len(batches)} batches"
    problems = exactly_once_report((row[0] for r in batches for row in r["rows"]), range(REPLAY_RECORDS))
    assert not problems, "\n".join(problems)


def test_task_retries_read_the_same_range(spark, kinesalite_server, stream_name, tmp_path, drivers):
    """The first attempt of one task per batch fails after PROBE_ROWS rows; the retry reads the same rows.

    Spark does not speculate in local mode (TaskSchedulerImpl starts the speculation thread only when the master
    is not local), so a retried task is the replay local mode can produce; `local[2,3]` allows 3 attempts.
    """
    kinesis = streams.client(kinesalite_server)
    streams.create_stream(kinesis, stream_name, SHARDS)
    writer = Writer(kinesalite_server, stream_name, RETRY_RECORDS, seconds=0.0, seed=SEED + 2, chunk=500)
    writer.start()
    writer.finish(timeout=60)
    markers = tmp_path / "markers"
    config = base_config(kinesalite_server, stream_name, tmp_path, initialPosition="trim_horizon",
                         maxRecordsPerTrigger=MAX_RECORDS_PER_TRIGGER)
    config.update(master="local[2,3]", trigger={"availableNow": True},
                  probe={"rows": PROBE_ROWS, "partition": 0, "action": "fail", "markers": str(markers)})
    d = drivers("retries", config)
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

    d = drivers("first", dict(config, trigger={}))
    wait_for(pinned.exists, DRIVER_START_TIMEOUT, "the pinned start", d, poll=0.01)
    put_ids(kinesis_mock_server, stream_name, after_start, "s")
    if crash_point == "batch0_in_flight":
        wait_for(lambda: 0 in batch_ids(offsets), 60, "batch 0's offsets", d, poll=0.01)
    d.kill()
    at_kill = {"offsets": batch_ids(offsets), "commits": batch_ids(commits)}
    print(f"{crash_point}: at the kill {at_kill}")
    if crash_point == "batch0_in_flight":
        assert 0 not in at_kill["commits"], f"batch 0 committed before the kill landed: {at_kill}"
    pinned_text = pinned.read_text()
    assert '"at_timestamp"' in pinned_text, f"`latest` is not pinned as a timestamp: {pinned_text}"

    put_ids(kinesis_mock_server, stream_name, after_crash, "c")
    restart = drivers("restart", dict(config, trigger={"availableNow": True}))
    code = restart.wait(RUN_TIMEOUT)
    assert code == 0, f"the restart exited with {code}:\n{restart.log_tail()}"
    assert pinned.read_text() == pinned_text, "the restart moved the pinned start"

    rows = sink_rows(spark, Path(config["output"]))
    problems = exactly_once_report((r["id"] for r in rows), list(after_start) + list(after_crash))
    assert not problems, "\n".join(problems)
