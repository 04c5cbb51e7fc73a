"""Steps for streaming tests, in the spirit of Spark's StreamTest: put records, start a driver, kill it, restart it,
expect ids.

* ``Writer`` puts test records ``{"id", "key", "seq"}`` to a stream (``put_records`` now, or ``start`` in a
  background thread) and remembers where each id landed (``acks``).
* ``Driver`` runs one of the driver scripts of ``tests/drivers/`` as a subprocess in its own session, so that
  ``kill`` ends it (Python, its JVM and the JVM's Python workers) with one SIGKILL to the process group, and
  ``restart`` runs it again from the same checkpoint. ``drivers`` is a pytest fixture that kills at the end of the
  test whatever it started.
* ``expect_ids`` and its helpers check what a query delivered: every expected id exactly once, per-key order.

Offsets and commits are read with ``harness.checkpoint``; every wait goes through ``harness.waiting.wait_for``::

    writer = Writer(streams.client(server), stream).put_records(500)
    driver = drivers("run-0", STREAMING_DRIVER, config)
    driver.await_started(120)
    driver.wait_until(lambda: len(checkpoint.commits(cp)) >= 2, 120, "two committed batches")
    driver.kill()
    final = driver.restart("final", trigger={"availableNow": True})
    assert final.wait(180) == 0, final.log_tail()
    expect_ids((r["id"] for r in sink_rows(spark, output)), writer.ids)
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
from typing import Any, Callable, Dict, Iterable, Iterator, List, NamedTuple, Optional, Tuple

import pytest

from . import checkpoint, jvm_threads, streams
from .waiting import text_tail, wait_for

__all__ = [
    "DRIVERS_DIR", "STREAMING_DRIVER", "RESHARDING_DRIVER", "SINK_DRIVER", "COMPACT_INTERVAL",
    "Ack", "Writer", "record", "put_ids", "Driver", "drivers",
    "exactly_once_report", "expect_ids", "order_violations", "sink_rows", "assert_exactly_once_from_replays",
]

DRIVERS_DIR = Path(__file__).resolve().parent.parent / "drivers"
STREAMING_DRIVER = DRIVERS_DIR / "streaming_driver.py"
RESHARDING_DRIVER = DRIVERS_DIR / "resharding_driver.py"
SINK_DRIVER = DRIVERS_DIR / "sink_driver.py"
COMPACT_INTERVAL = "1000000"  # streaming_driver.py turns file sink log compaction off with this value
KILL_TIMEOUT = 30.0


# --------------------------------------------------------------------------------------------------------------
# Writing records


def record(i: int, key: str, seq: int) -> Tuple[str, str]:
    """A test record: (data, partition key), the data the JSON ``{"id", "key", "seq"}``."""
    return json.dumps({"id": i, "key": key, "seq": seq}), key


def put_ids(server, stream: str, ids: Iterable[int], tag: str) -> None:
    """Puts the records of ``ids`` at once, keyed ``<tag><id % 7>``, ``seq`` the id."""
    streams.put_records(streams.client(server), stream, [record(i, f"{tag}{i % 7}", i) for i in ids])


class Ack(NamedTuple):
    """Where PutRecords put one id."""
    shard: str
    sequence_number: str
    key: str
    seq: int


class Writer:
    """Puts records ``{"id", "key", "seq"}``: ids from ``first`` on, ``seq`` increasing per key, the key also the
    partition key. Remembers where each id landed (``acks``) and when (``written_at``, epoch seconds).

    Keys: ``key-00`` .. in turn (id modulo ``keys``) without a ``seed``, ``k<n>`` drawn at random with one.
    ``resend_failed``: re-send entries PutRecords refused (``streams.put_records``); off, a refused entry fails the
    writer, because re-sending it after later ones could reorder its key, and a per-key order check would then
    blame the connector for the writer's doing.

    ``put_records`` writes now; ``start`` writes in a background thread (one at a time, so per-key order in Kinesis
    is the ``seq`` order), paced by a ``pause`` after each call or spread over ``seconds``, and, with an
    ``allowance``, only as many records as ``allow`` has released so far.
    """

    def __init__(self, kinesis, stream: str, keys: int = 30, seed: Optional[int] = None, first: int = 0,
                 resend_failed: bool = True):
        self.kinesis, self.stream, self.keys = kinesis, stream, keys
        self.rng = random.Random(seed) if seed is not None else None
        self.resend_failed = resend_failed
        self.next_id = first
        self.per_key: Dict[str, int] = collections.defaultdict(int)
        self.acks: Dict[int, Ack] = {}
        self.written_at: Dict[int, float] = {}
        self.count = 0  # how many the background thread is to write
        self.allowance = 0
        self.error: Optional[BaseException] = None
        self.stop_event = threading.Event()
        self._lock = threading.Lock()
        self._allowance_changed = threading.Condition()
        self._thread: Optional[threading.Thread] = None

    @property
    def written(self) -> int:
        with self._lock:
            return len(self.acks)

    @property
    def ids(self) -> set:
        with self._lock:
            return set(self.acks)

    def _key(self, i: int) -> str:
        return f"k{self.rng.randrange(self.keys)}" if self.rng is not None else f"key-{i % self.keys:02d}"

    def _put(self, n: int) -> None:
        ids, entries = [], []
        for _ in range(n):
            i = self.next_id
            key = self._key(i)
            entries.append(record(i, key, self.per_key[key]))
            ids.append((i, key, self.per_key[key]))
            self.per_key[key] += 1
            self.next_id += 1
        if self.resend_failed:
            results = streams.put_records(self.kinesis, self.stream, entries)
        else:
            response = self.kinesis.put_records(
                StreamName=self.stream, Records=[{"Data": d.encode(), "PartitionKey": k} for d, k in entries])
            if response.get("FailedRecordCount"):
                raise RuntimeError(f"PutRecords rejected {response['FailedRecordCount']} entries; the writer "
                                   "does not re-send them because that could reorder a key")
            results = response["Records"]
        now = time.time()
        with self._lock:
            for (i, key, seq), r in zip(ids, results):
                self.acks[i] = Ack(r["ShardId"], r["SequenceNumber"], key, seq)
                self.written_at[i] = now

    def _write(self, count: int, chunk: int, pause: float, seconds: float, gated: bool) -> None:
        done = 0
        while done < count:
            if gated and not self._wait_for_allowance():
                return
            started = time.monotonic()
            n = min(chunk, count - done)
            self._put(n)
            done += n
            wait = pause if pause else started + seconds * n / count - time.monotonic()
            if wait > 0:
                self.stop_event.wait(wait)

    def put_records(self, count: int, chunk: int = 50, pause: float = 0.0, seconds: float = 0.0) -> "Writer":
        """Writes ``count`` more records now, ``chunk`` per PutRecords call."""
        self._write(count, chunk, pause, seconds, gated=False)
        return self

    def start(self, count: int, chunk: int = 50, pause: float = 0.0, seconds: float = 0.0,
              allowance: Optional[int] = None) -> "Writer":
        """Writes ``count`` more records in a background thread; ``join`` waits for it and reports its failure."""
        self.count = count
        self._base = self.written
        self.allowance = count if allowance is None else allowance

        def run():
            try:
                self._write(count, chunk, pause, seconds, gated=True)
            except BaseException as e:  # noqa: BLE001 - reported by join()
                self.error = e

        self._thread = threading.Thread(target=run, name=f"writer-{self.stream}", daemon=True)
        self._thread.start()
        return self

    def allow(self, n: int) -> None:
        """Lets the background thread have written up to ``n`` of its records (never more than it was started with)."""
        with self._allowance_changed:
            self.allowance = max(self.allowance, min(n, self.count))
            self._allowance_changed.notify_all()

    def _wait_for_allowance(self) -> bool:
        with self._allowance_changed:
            while self.written - self._base >= self.allowance and not self.stop_event.is_set():
                self._allowance_changed.wait(0.2)
        return not self.stop_event.is_set()

    def wait_written(self, n: int, timeout: float = 120.0) -> None:
        """Until ``n`` records are written in all (or the background thread ended); raises the writer's failure."""
        wait_for(lambda: self.written >= n or self.error is not None or self._thread is None
                 or not self._thread.is_alive(), timeout, f"{n} records written")
        if self.error is not None:
            raise self.error

    def join(self, timeout: float = 180.0) -> None:
        """Waits for the background thread; fails when it is still writing or failed."""
        if self._thread is None:
            return
        self._thread.join(timeout)
        assert not self._thread.is_alive(), f"writer did not finish within {timeout:.0f} s ({self.written} written)"
        if self.error is not None:
            raise AssertionError(f"writer failed: {self.error!r}") from self.error
        assert self.written - self._base == self.count, (self.written, self._base, self.count)

    def stop(self) -> None:
        """Asks the background thread to stop after its current call."""
        self.stop_event.set()

    def last_sequence_on(self, shard_id: str) -> str:
        with self._lock:
            return max((a.sequence_number for a in self.acks.values() if a.shard == shard_id), key=int)

    def check_own_order(self, resharded: bool = False) -> None:
        """Harness precondition: in Kinesis, each key's records are in ``seq`` order on one shard. With
        ``resharded`` a key may move on to a child shard: it then never comes back to a shard it left, and is in
        ``seq`` order within each shard."""
        by_key: Dict[str, List[Tuple[int, str, int]]] = collections.defaultdict(list)
        for a in list(self.acks.values()):
            by_key[a.key].append((a.seq, a.shard, int(a.sequence_number)))
        for key, items in by_key.items():
            items.sort()
            runs = [shard for i, (_, shard, _) in enumerate(items) if i == 0 or items[i - 1][1] != shard]
            if resharded:
                assert len(runs) == len(set(runs)), f"key {key} went back to a shard it had left: {runs}"
            else:
                assert len(runs) == 1, f"key {key} landed on several shards"
            for shard in set(runs):
                sequences = [s for _, sh, s in items if sh == shard]
                assert sequences == sorted(sequences), f"the writer's own records of key {key} are out of order"


# --------------------------------------------------------------------------------------------------------------
# The driver subprocess


class Driver:
    """One run of a driver script (``tests/drivers/``) in its own session and process group.

    The run's files are in ``workdir``, named after it: ``<name>.json`` (the config the script reads: ``config``
    plus ``status`` and ``stop_file``), ``<name>.log`` (its output), ``status-<name>/`` (``started.json`` once the
    query runs, ``events.jsonl``) and ``<name>.stop`` (asks the script to stop its query).
    """

    def __init__(self, script: Path, workdir: Path, name: str, config: Dict[str, Any],
                 registry: Optional[List["Driver"]] = None):
        self.script, self.workdir, self.name = Path(script), Path(workdir), name
        self._registry = registry  # where start() enters it (the ``drivers`` fixture's list), restarts included
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.status = self.workdir / f"status-{name}"
        self.stop_file = self.workdir / f"{name}.stop"
        self.log_path = self.workdir / f"{name}.log"
        self.config = dict(config)
        self.proc: Optional[subprocess.Popen] = None
        self.pgid: Optional[int] = None
        self.killed = False
        self._log = None

    def start(self) -> "Driver":
        config_path = self.workdir / f"{self.name}.json"
        config_path.write_text(json.dumps(dict(self.config, status=str(self.status), stop_file=str(self.stop_file)),
                                          indent=1))
        env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", AWS_EC2_METADATA_DISABLED="true",
                   PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable, PYTHONUNBUFFERED="1")
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen([sys.executable, str(self.script), str(config_path)], stdout=self._log,
                                     stderr=subprocess.STDOUT, env=env, start_new_session=True,
                                     cwd=str(self.workdir))
        self.pgid = self.proc.pid  # start_new_session: the child leads its own process group
        if self._registry is not None:
            self._registry.append(self)
        return self

    def restart(self, name: str, **changes: Any) -> "Driver":
        """A new run of the same script with the same config (so the same checkpoint), ``changes`` applied."""
        return Driver(self.script, self.workdir, name, dict(self.config, **changes), self._registry).start()

    def poll(self) -> Optional[int]:
        """None while it runs (or before it starts), else its exit code."""
        return None if self.proc is None else self.proc.poll()

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def started(self) -> bool:
        """Whether its query runs (the script has written ``started.json``)."""
        return (self.status / "started.json").exists()

    def events(self) -> List[dict]:
        """The script's listener events (``status-<name>/events.jsonl``), a line cut by a kill left out."""
        path = self.status / "events.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip().endswith("}")]

    def _flush(self) -> None:
        if self._log is not None and not self._log.closed:
            self._log.flush()

    def log_tail(self, chars: int = 4000) -> str:
        self._flush()
        return text_tail(self.log_path, chars)

    def log_lines(self, last: Optional[int] = None) -> List[str]:
        """The lines of its log (the ``last`` ones only, when given)."""
        self._flush()
        lines = text_tail(self.log_path, sys.maxsize).splitlines()
        return lines if last is None else lines[-last:]

    def deadlocks(self) -> str:
        """What jstack says about Java-level deadlocks in the driver's JVM ("" when none or no jstack)."""
        if self.pgid is None:
            return ""
        found = (jvm_threads.deadlock(jvm_threads.thread_dump(pid))
                 for pid in jvm_threads.java_pids_in_group(self.pgid))
        return "\n".join(f for f in found if f)

    def report(self) -> str:
        """For a failure message: its log tail, and a JVM deadlock if jstack finds one."""
        text = f"log tail of {self.name}:\n{self.log_tail()}"
        deadlock = self.deadlocks()
        if deadlock:
            text += f"\n\nthe driver's JVM is deadlocked (jstack):\n{deadlock}"
        return text

    def wait_until(self, condition: Callable[[], Any], timeout: float, what: str, interval: float = 0.05,
                   context: Optional[Callable[[], str]] = None) -> Any:
        """``wait_for`` the condition while the driver runs: fails at once if it exits, with its log."""
        return wait_for(condition, timeout, what, interval=interval, process=self, log=self.report, context=context)

    def await_started(self, timeout: float, interval: float = 0.05) -> None:
        """Until its query runs."""
        self.wait_until(self.started, timeout, f"the query of {self.name} to start", interval=interval)

    def kill(self) -> None:
        """SIGKILL to the whole process group, then wait until every process in it is gone."""
        if self.proc is None:
            return
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
        wait_for(lambda: not _group_alive(self.pgid), KILL_TIMEOUT,
                 f"every process of group {self.pgid} (driver {self.name}) to end", interval=0.05)

    def wait(self, timeout: float) -> int:
        """Until it exits; its exit code. Kills it and fails with its log (and any JVM deadlock) after ``timeout``."""
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            report = self.report()
            self.kill()
            raise AssertionError(f"driver {self.name} did not end within {timeout:.0f} s; {report}")
        finally:
            if not self._log.closed:
                self._log.close()

    def stop(self, timeout: float = 60.0) -> int:
        """Asks the script to stop its query (the stop file), waits for its exit code, then kills any leftovers of
        its process group."""
        self.stop_file.touch()
        code = self.wait(timeout)
        self.kill()
        return code


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture
def drivers(tmp_path) -> Iterator[Callable[..., Driver]]:
    """``drivers(name, script, config)`` starts a Driver in the test's temporary folder; at the end of the test every
    one still running, restarts included, is SIGKILLed (only the groups it started). Import it into a test module::

        from harness.streaming import drivers  # noqa: F401 (pytest fixture)
    """
    started: List[Driver] = []

    def start(name: str, script: Path, config: Dict[str, Any], workdir: Optional[Path] = None) -> Driver:
        return Driver(script, workdir or tmp_path, name, config, started).start()

    yield start
    for d in started:
        if d.alive():
            try:
                d.kill()
            except Exception:  # noqa: BLE001 - best effort; the test already reported its own failure
                pass
        elif d._log is not None and not d._log.closed:
            d._log.close()


# --------------------------------------------------------------------------------------------------------------
# What a query delivered


def exactly_once_report(ids: Iterable[int], expected: Iterable[int]) -> List[str]:
    """Problems with ``ids`` against ``expected`` (each expected id exactly once), as readable lines."""
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


def expect_ids(ids: Iterable[int], expected: Iterable[int]) -> None:
    """Every id of ``expected`` delivered exactly once, and nothing else."""
    problems = exactly_once_report(ids, expected)
    assert not problems, "\n".join(problems)


def order_violations(rows: List[dict]) -> List[str]:
    """Per key: rows ordered by (batch, sequence number, sub-sequence) must have strictly increasing ``seq``."""
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


def sink_rows(spark, output: Path) -> List[dict]:
    """Every row a Parquet file sink committed (Spark honours _spark_metadata), with the batch that wrote it."""
    files = checkpoint.file_sink_batches(output)
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


def assert_exactly_once_from_replays(spark, output: Path, expected: Iterable[int], replay: str) -> None:
    """The sink at ``output`` holds every id of ``expected`` once, in key order, and some rows come from a replayed
    task attempt (``replay`` names it in the message: "retried task", "speculative copy")."""
    rows = sink_rows(spark, output)
    expect_ids((r["id"] for r in rows), expected)
    assert any(r["attempt"] > 0 for r in rows), f"no committed row came from a {replay}"
    bad = order_violations(rows)
    assert not bad, f"{len(bad)} per-key order violations, e.g.\n" + "\n".join(bad[:10])
