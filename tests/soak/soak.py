#!/usr/bin/env python3
"""Soak: the exactly-once driver under many injected faults, then a count of what was lost, duplicated or reordered.

Not part of ``make test`` or CI (pytest does not collect this folder's files: none is named ``test_*``)::

    make soak                                   # 50 faults, seed 12, about 25 minutes
    .venv/bin/python tests/soak/soak.py --faults 8 --minutes 8 --seed 3

What runs: kinesalite with a data folder, on a fixed port of 127.0.0.1, behind the fault proxy
(``tests/harness/fault_proxy.py``); a Spark standalone cluster (``tests/harness/standalone_cluster.py``, two one-core
workers, so two executor JVMs); ``tests/drivers/streaming_driver.py`` on that cluster, reading the stream through the
proxy into the Parquet file sink with a processing-time trigger; and a ``Writer`` putting ``{"id", "key", "seq"}``
records (``seq`` increasing per key) straight into kinesalite the whole time.

Faults, one after another at random moments (a pause drawn from the seeded generator between two), their kinds
shuffled together (every kind at least once when there are enough faults):

* ``driver_kill``: SIGKILL of the whole driver (Python, JVM) while a batch is in flight (its offsets logged, its
  commit not yet), at a random point of it; then a restart from the same checkpoint.
* ``executor_loss``: SIGKILL of one executor JVM, chosen at random; its worker launches a replacement.
* ``throttle_storm``: for some seconds most GetRecords calls (and some ListShards calls) are throttled by the proxy.
* ``expired_iterators``: a burst of GetRecords calls answered ExpiredIteratorException.
* ``reshard``: SplitShard or MergeShards on the stream while the query runs (kinesalite has no UpdateShardCount).
* ``server_restart``: kinesalite stopped and started again on the same port and data folder; it keeps its streams
  and records. The writer holds its next call until the server is back.

Then the writer stops, the running driver is stopped, and a last run with ``Trigger.AvailableNow`` reads whatever
is left. Every committed row of the sink is read back (``harness.streaming.sink_rows``) and checked: each written id
exactly once, and per key ``seq`` increasing in (batch, sequence number) order. The exit code is 0 only when nothing
was lost, duplicated or reordered and no query failed by itself.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import shutil
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from harness import checkpoint, local_kinesis, standalone_cluster, streams  # noqa: E402
from harness.fault_proxy import EXPIRED_ITERATOR, THROTTLED_GET_RECORDS, FaultProxy  # noqa: E402
from harness.streaming import (  # noqa: E402
    STREAMING_DRIVER, Driver, Writer, exactly_once_report, order_violations, sink_rows,
)
from harness.waiting import WaitFailed, wait_for  # noqa: E402

KINDS = ("driver_kill", "executor_loss", "throttle_storm", "expired_iterators", "reshard", "server_restart")
# How often each kind is drawn once every kind has had its turn.
WEIGHTS = {"driver_kill": 3, "executor_loss": 3, "throttle_storm": 2, "expired_iterators": 2, "reshard": 3,
           "server_restart": 2}
DEFAULT_SEED = 12
DEFAULT_FAULTS = 50
DEFAULT_MINUTES = 25.0
RESERVE_S = 240.0  # of the time budget, kept for the start and for the final AvailableNow run and the check
HARD_LIMIT_FACTOR = 1.5  # no fault is started after this many times the budget; the run ends with what it has
SHARDS = 4
MIN_OPEN_SHARDS, MAX_OPEN_SHARDS = 2, 8
KEYS = 32
DRIVER_START_TIMEOUT = 240.0
FINAL_RUN_TIMEOUT = 600.0
REPLACEMENT_TIMEOUT = 180.0
CREDENTIALS = {"region": "us-east-1", "awsAccessKeyId": "soak", "awsSecretKey": "soak"}


class Soak:
    def __init__(self, args: argparse.Namespace, workdir: Path):
        self.args = args
        self.workdir = workdir
        self.rng = random.Random(args.seed)
        self.t0 = time.monotonic()
        self.stream = f"soak-{args.seed}"
        self.checkpoint = workdir / "checkpoint"
        self.output = workdir / "output"
        self.server: Optional[local_kinesis.LocalKinesis] = None
        self.proxy: Optional[FaultProxy] = None
        self.cluster: Optional[standalone_cluster.StandaloneCluster] = None
        self.driver: Optional[Driver] = None
        self.runs = 0
        self.faults: List[dict] = []
        self.query_failures: List[str] = []
        self.write_lock = threading.Lock()  # held by every PutRecords call, and by a server restart
        self.writer: Optional[Writer] = None
        self.writer_stop = threading.Event()
        self.writer_thread: Optional[threading.Thread] = None
        self.writer_error: Optional[BaseException] = None

    # -- output --------------------------------------------------------------------------------------------------

    def elapsed(self) -> float:
        return time.monotonic() - self.t0

    def say(self, message: str) -> None:
        print(f"[soak {self.elapsed():7.1f}s] {message}", flush=True)

    # -- the pieces ----------------------------------------------------------------------------------------------

    def start_servers(self) -> None:
        port = _free_port()
        self.server = local_kinesis.start(local_kinesis.KINESALITE, self.workdir / "kinesalite",
                                          self.workdir / "kinesalite-data", port=port)
        self.proxy = FaultProxy(self.server.endpoint).start()
        self.say(f"kinesalite at {self.server.endpoint} (PID {self.server.pid}, data in kinesalite-data), "
                 f"fault proxy at {self.proxy.endpoint}")
        streams.create_stream(streams.client(self.server), self.stream, SHARDS)
        self.cluster = standalone_cluster.start(self.workdir / "cluster", workers=2)
        self.say(f"standalone cluster at {self.cluster.master_url}, workers "
                 f"{', '.join(f'{w.name} (PID {w.pid})' for w in self.cluster.workers)}")

    def driver_config(self) -> dict:
        source = dict(CREDENTIALS, endpointUrl=self.proxy.endpoint, cborEnabled="false", streamName=self.stream,
                      initialPosition="trim_horizon", shardDiscoveryInterval="1s")
        conf = {
            "spark.executor.memory": "512m",
            "spark.executor.cores": "1",
            "spark.cores.max": "2",
            "spark.scheduler.minRegisteredResourcesRatio": "1.0",
            "spark.scheduler.maxRegisteredResourcesWaitingTime": "120s",
            # Executors are killed on purpose: a task may lose a few executors before its stage gives up.
            "spark.task.maxFailures": "12",
            "spark.ui.enabled": "false",
        }
        return {"master": self.cluster.master_url, "conf": conf, "source": source,
                "checkpoint": str(self.checkpoint), "output": str(self.output),
                "sink": "parquet", "trigger": {"processingTime": "1 second"},
                "max_seconds": self.args.minutes * 60 * 2 + 600}

    def start_driver(self, **changes) -> Driver:
        name = f"run-{self.runs}"
        self.runs += 1
        config = dict(self.driver_config(), **changes)
        self.driver = Driver(STREAMING_DRIVER, self.workdir / "drivers", name, config).start()
        self.driver.await_started(DRIVER_START_TIMEOUT)
        return self.driver

    def start_writer(self) -> None:
        self.writer = Writer(streams.client(self.server), self.stream, keys=KEYS, seed=self.args.seed,
                             resend_failed=False)
        chunk = max(1, round(self.args.rate / 4))

        def run():
            try:
                while not self.writer_stop.is_set():
                    with self.write_lock:
                        self.writer.put_records(chunk)
                    self.writer_stop.wait(0.25)
            except BaseException as e:  # noqa: BLE001 - reported at the end
                self.writer_error = e

        self.writer_thread = threading.Thread(target=run, name="soak-writer", daemon=True)
        self.writer_thread.start()

    def stop_writer(self) -> None:
        self.writer_stop.set()
        if self.writer_thread is not None:
            self.writer_thread.join(120)
            if self.writer_thread.is_alive():
                raise RuntimeError("the writer did not stop within 120 s")

    # -- watching the query --------------------------------------------------------------------------------------

    def batch_in_flight(self) -> bool:
        cp = self.checkpoint
        return checkpoint.last_batch(cp / "offsets") > checkpoint.last_batch(cp / "commits")

    def ensure_running(self) -> None:
        """When the query failed by itself, note it (with its error) and start it again from its checkpoint."""
        if self.driver is not None and self.driver.alive():
            return
        code = self.driver.poll() if self.driver is not None else None
        errors = [line for line in self.driver.log_lines() if "Exception" in line or "failed" in line][-3:] \
            if self.driver is not None else []
        self.query_failures.append(f"{self.driver.name if self.driver else '?'} exited with {code}: "
                                   + " | ".join(errors))
        self.say(f"QUERY FAILURE: driver {self.driver.name} exited with {code}; last errors:\n    "
                 + "\n    ".join(errors) + f"\n    (log: {self.driver.log_path})")
        self.start_driver()
        self.say(f"restarted as {self.driver.name}")

    def pause(self, seconds: float) -> None:
        """A random pause between faults, cut short only by the query's failure."""
        deadline = time.monotonic() + seconds
        wait_for(lambda: time.monotonic() >= deadline or not self.driver.alive(), seconds + 5, "the pause",
                 interval=0.2)
        self.ensure_running()

    def committed_since(self, batch: int, timeout: float, what: str) -> None:
        self.driver.wait_until(lambda: checkpoint.last_batch(self.checkpoint / "commits") > batch, timeout, what)

    # -- faults --------------------------------------------------------------------------------------------------

    def driver_kill(self) -> str:
        cp = self.checkpoint
        # A random point inside a batch: once one is in flight (its offsets logged, no commit yet), a random delay.
        self.driver.wait_until(self.batch_in_flight, 120, "a batch in flight", interval=0.01)
        in_flight = checkpoint.last_batch(cp / "offsets")
        delay = self.rng.uniform(0.0, 1.5)
        time.sleep(delay)
        still = self.batch_in_flight()
        offsets, commits = checkpoint.last_batch(cp / "offsets"), checkpoint.last_batch(cp / "commits")
        old = self.driver.name
        self.driver.kill()
        started = time.monotonic()
        self.start_driver()
        self.committed_since(commits, DRIVER_START_TIMEOUT, f"a commit after the restart of {old}")
        where = (f"inside batch {offsets} (planned, not committed)" if still
                 else f"{delay:.2f} s after batch {in_flight} began, which had committed by then")
        return (f"killed {old} {where}; restarted as {self.driver.name}, committing again after "
                f"{time.monotonic() - started:.1f} s")

    def executor_loss(self) -> str:
        with_batch = True
        try:
            self.driver.wait_until(self.batch_in_flight, 30, "a batch in flight", interval=0.01)
        except WaitFailed:
            with_batch = False
        executors = self.cluster.executors()
        if not executors:
            raise RuntimeError("no executor found on the workers")
        newest = max(e.app_id for e in executors)
        victim = self.rng.choice([e for e in executors if e.app_id == newest])
        if not self.cluster.kill_executor(victim):
            return f"executor {victim.executor_id} (PID {victim.pid}) was gone before the kill"
        started = time.monotonic()
        replacement = self.driver.wait_until(
            lambda: [e for e in self.cluster.executors()
                     if e.app_id == newest and e.worker == victim.worker and e.pid != victim.pid],
            REPLACEMENT_TIMEOUT, f"a replacement for executor {victim.executor_id} on {victim.worker}")[0]
        return (f"SIGKILL executor {victim.executor_id} (PID {victim.pid}) on {victim.worker}"
                f"{' during a batch' if with_batch else ''}; executor {replacement.executor_id} "
                f"(PID {replacement.pid}) replaced it after {time.monotonic() - started:.1f} s")

    def throttle_storm(self) -> str:
        rate = self.rng.uniform(0.5, 0.95)
        seconds = self.rng.uniform(5.0, 20.0)
        before = self.proxy.injected(THROTTLED_GET_RECORDS)
        self.proxy.throttle_get_records(rate, seed=self.rng.randrange(1 << 30))
        self.proxy.inject_error("ListShards", "LimitExceededException", rate=0.3, seed=self.rng.randrange(1 << 30))
        try:
            self.pause(seconds)
        finally:
            self.proxy.clear_faults()
        return (f"{seconds:.1f} s with {rate:.0%} of GetRecords throttled and 30% of ListShards refused: "
                f"{self.proxy.injected(THROTTLED_GET_RECORDS) - before} GetRecords throttled")

    def expired_iterators(self) -> str:
        count = self.rng.randint(3, 12)
        every = self.rng.randint(1, 4)
        before = self.proxy.injected(EXPIRED_ITERATOR)
        self.proxy.expire_iterator_every(every, max_count=count)
        try:
            self.driver.wait_until(lambda: self.proxy.injected(EXPIRED_ITERATOR) - before >= count, 120,
                                   f"{count} expired iterators delivered", interval=0.1)
        finally:
            self.proxy.clear_faults()
        return f"{count} GetRecords calls (one in {every}) answered ExpiredIteratorException"

    def reshard(self) -> str:
        kinesis = streams.client(self.server)
        listing = streams.list_shards(kinesis, self.stream)
        open_shards = sorted((s for s in listing if "EndingSequenceNumber" not in s["SequenceNumberRange"]),
                             key=lambda s: int(s["HashKeyRange"]["StartingHashKey"]))
        pairs = [(a, b) for a, b in zip(open_shards, open_shards[1:])
                 if int(a["HashKeyRange"]["EndingHashKey"]) + 1 == int(b["HashKeyRange"]["StartingHashKey"])]
        split = len(open_shards) <= MIN_OPEN_SHARDS or not pairs or (
            len(open_shards) < MAX_OPEN_SHARDS and self.rng.random() < 0.5)
        if split:
            shard = self.rng.choice(open_shards)
            lo, hi = int(shard["HashKeyRange"]["StartingHashKey"]), int(shard["HashKeyRange"]["EndingHashKey"])
            kinesis.split_shard(StreamName=self.stream, ShardToSplit=shard["ShardId"],
                                NewStartingHashKey=str((lo + hi + 1) // 2))
            what = f"split {shard['ShardId']}"
        else:
            a, b = self.rng.choice(pairs)
            kinesis.merge_shards(StreamName=self.stream, ShardToMerge=a["ShardId"], AdjacentShardToMerge=b["ShardId"])
            what = f"merged {a['ShardId']} and {b['ShardId']}"
        streams.wait_active(kinesis, self.stream)
        now_open = [s for s in streams.list_shards(kinesis, self.stream)
                    if "EndingSequenceNumber" not in s["SequenceNumberRange"]]
        return f"{what}: {len(open_shards)} -> {len(now_open)} open shards"

    def server_restart(self) -> str:
        down_for = self.rng.uniform(0.0, 10.0)
        with self.write_lock:  # no PutRecords in flight while the server goes away
            old_pid = self.server.pid
            started = time.monotonic()
            self.server = self.server.restart(down=down_for)
            down = time.monotonic() - started
        summary = streams.client(self.server).describe_stream_summary(StreamName=self.stream)
        return (f"kinesalite PID {old_pid} stopped, PID {self.server.pid} answers on the same port after "
                f"{down:.1f} s; the stream is {summary['StreamDescriptionSummary']['StreamStatus']}")

    # -- the run -------------------------------------------------------------------------------------------------

    def plan(self) -> List[str]:
        n = self.args.faults
        kinds = list(KINDS)[:n] if n < len(KINDS) else list(KINDS)
        names, weights = zip(*WEIGHTS.items())
        kinds += self.rng.choices(names, weights, k=max(0, n - len(kinds)))
        self.rng.shuffle(kinds)
        return kinds

    def inject(self) -> None:
        kinds = self.plan()
        budget = self.args.minutes * 60.0
        fault_deadline = self.t0 + budget - RESERVE_S
        hard_limit = self.t0 + budget * HARD_LIMIT_FACTOR - RESERVE_S
        durations: List[float] = []
        actions: Dict[str, Callable[[], str]] = {k: getattr(self, k) for k in KINDS}
        for i, kind in enumerate(kinds):
            if time.monotonic() > hard_limit:
                self.say(f"time is up after {i} faults of {len(kinds)}")
                break
            remaining_time = fault_deadline - time.monotonic()
            typical = sum(durations) / len(durations) if durations else 20.0
            gap = max(0.0, remaining_time / (len(kinds) - i) - typical)
            self.pause(self.rng.uniform(0.2, 1.8) * gap if gap > 0 else self.rng.uniform(0.5, 2.0))
            started = time.monotonic()
            at = self.elapsed()
            try:
                outcome = actions[kind]()
            except WaitFailed as e:
                outcome = f"did not complete: {str(e).splitlines()[0]}"
            took = time.monotonic() - started
            durations.append(took)
            self.faults.append({"kind": kind, "at": round(at, 1), "seconds": round(took, 1), "outcome": outcome})
            print(f"[soak {at:7.1f}s] fault {i + 1}/{len(kinds)} {kind}: {outcome}", flush=True)
            self.ensure_running()
            if self.writer_error is not None:
                raise RuntimeError(f"the writer failed: {self.writer_error!r}") from self.writer_error

    def finish(self) -> Dict[str, object]:
        self.stop_writer()
        written = self.writer.written
        self.say(f"faults done; the writer stopped after {written} records; stopping {self.driver.name}")
        code = self.driver.stop(120)
        if code != 0:
            self.query_failures.append(f"{self.driver.name} exited with {code} when asked to stop")
        final = self.start_driver(trigger={"availableNow": True})
        code = final.wait(FINAL_RUN_TIMEOUT)
        if code != 0:
            self.query_failures.append(f"the final AvailableNow run {final.name} exited with {code}")
        self.say(f"final AvailableNow run {final.name} ended with {code}")
        ids = self.writer.ids
        self.cluster.stop()
        self.cluster = None
        from harness.local_spark import local_session
        spark = local_session("spark-kinesis-soak-check", "local[1]")
        try:
            rows = sink_rows(spark, self.output)
        finally:
            spark.stop()
        counts = collections.Counter(r["id"] for r in rows)
        violations = order_violations(rows)
        return {
            "written": written,
            "rows": len(rows),
            "lost": len(ids - set(counts)),
            "duplicated": sum(n - 1 for n in counts.values() if n > 1),
            "unexpected": len(set(counts) - ids),
            "out_of_order": len(violations),
            "problems": exactly_once_report(counts.elements(), ids) + violations[:10],
            "batches": len({r["batch"] for r in rows}),
        }

    def close(self) -> None:
        for step in (lambda: self.driver is not None and self.driver.alive() and self.driver.kill(),
                     lambda: self.cluster is not None and self.cluster.stop(),
                     lambda: self.proxy is not None and self.proxy.stop(),
                     lambda: self.server is not None and self.server.stop()):
            try:
                step()
            except Exception as e:  # noqa: BLE001 - best effort, the rest still has to stop
                print(f"[soak] while stopping: {e!r}", file=sys.stderr)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--faults", type=int, default=DEFAULT_FAULTS, help=f"default {DEFAULT_FAULTS}")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"default {DEFAULT_SEED}")
    parser.add_argument("--minutes", type=float, default=DEFAULT_MINUTES,
                        help=f"time budget of the whole run (default {DEFAULT_MINUTES:g}); faults are spread over it")
    parser.add_argument("--rate", type=float, default=40.0, help="records written per second (default 40)")
    parser.add_argument("--workdir", type=Path, help="keep everything here (default: a new temporary folder, "
                        "removed after a clean run)")
    args = parser.parse_args(argv)
    if args.faults < 1 or args.minutes <= RESERVE_S / 60:
        parser.error(f"--faults must be at least 1 and --minutes more than {RESERVE_S / 60:g}")
    os.environ.setdefault("AWS_EC2_METADATA_DISABLED", "true")
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    workdir = (args.workdir or Path(tempfile.mkdtemp(prefix="spark-kinesis-soak-"))).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    soak = Soak(args, workdir)
    soak.say(f"seed {args.seed}, {args.faults} faults, budget {args.minutes:g} minutes, {args.rate:g} records/s, "
             f"workdir {workdir}")
    result: Dict[str, object] = {}
    try:
        soak.start_servers()
        soak.start_writer()
        soak.start_driver()
        soak.say(f"{soak.driver.name} runs; injecting faults")
        soak.inject()
        result = soak.finish()
    finally:
        soak.close()
    if soak.writer_error is not None:
        soak.query_failures.append(f"the writer failed: {soak.writer_error!r}")
    kinds = collections.Counter(f["kind"] for f in soak.faults)
    soak.say(f"seed {args.seed}: {len(soak.faults)} faults in {soak.elapsed() / 60:.1f} min: "
             + ", ".join(f"{k} {kinds[k]}" for k in KINDS))
    soak.say(f"records written {result['written']}, rows in the sink {result['rows']} in {result['batches']} "
             f"batches, driver runs {soak.runs}")
    soak.say(f"lost {result['lost']}, duplicated {result['duplicated']}, out of per-key order "
             f"{result['out_of_order']}, unexpected {result['unexpected']}, query failures "
             f"{len(soak.query_failures)}")
    for line in list(result["problems"]) + soak.query_failures:
        soak.say(f"  {line}")
    (workdir / "soak-result.json").write_text(json.dumps(
        {"seed": args.seed, "faults": soak.faults, "result": result, "queryFailures": soak.query_failures},
        indent=1, default=str))
    ok = not (result["lost"] or result["duplicated"] or result["out_of_order"] or result["unexpected"]
              or soak.query_failures or len(soak.faults) < args.faults)
    soak.say("PASS" if ok else f"FAIL (everything is kept in {workdir})")
    if ok and args.workdir is None:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
