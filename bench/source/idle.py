#!/usr/bin/env python3
"""What an idle query costs, and how soon it notices the first record after a quiet spell (not part of CI).

Results and commands: docs/performance.md, "Idle cost". One query (default trigger, foreachBatch) on an idle
kinesalite stream of --shards shards, read through the fault proxy, which counts GetRecords calls per shard:

* each minute of --idle-minutes: the Spark jobs the application ran (from its status tracker), the GetRecords
  calls per shard, and the calls the driver made itself (the source's `driverGetRecordsCalls` metric);
* with --trickle-seconds S, one record is put every S seconds (to a random shard) during those minutes, and each
  minute also reports the trickle records' way from PutRecords to foreachBatch;
* each minute, the CPU time the Spark JVM used (driver and, in local mode, the executors' tasks), in seconds;
* then --samples times: wait until every shard is quiet again (the driver watches all of them: the source's
  `quietShards` metric, in a progress reported after the last record arrived), put one record, and time its way
  from the PutRecords acknowledgement to foreachBatch (`--trace`: with the Spark jobs on the way).

    make bench-idle            # or: .venv/bin/python bench/source/idle.py --shards 100 --idle-minutes 10 --plot
    .venv/bin/python bench/source/idle.py --idle-minutes 0 --samples 5 --trace   # the samples alone, for development
    .venv/bin/python bench/source/idle.py --shards 200 --idle-minutes 3 --trickle-seconds 10 --samples 0 --name bench-trickle
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import tempfile
import threading
import time
import uuid
from datetime import datetime

from common import arrival_recorder, kinesalite, new_figure, read_stream, save_figure, spark_session, write_results
from harness import streams  # common.py puts tests/ on the path
from harness.waiting import WaitFailed, wait_for
from harness.fault_proxy import FaultProxy


def job_count(spark) -> int:
    """Jobs the application has started, of every job group (a streaming query runs its jobs in a group of its
    own): job ids count up from 0."""
    listed = spark.sparkContext._jsc.sc().statusStore().jobsList(None)
    return max((listed.apply(i).jobId() for i in range(listed.size())), default=-1) + 1


def jobs_since(spark, since: float) -> list[dict]:
    """The application's Spark jobs submitted at or after `since` (epoch seconds), oldest first: when each was
    submitted and how long it took, relative to `since`, and its task count (from the driver's status store)."""
    listed = spark.sparkContext._jsc.sc().statusStore().jobsList(None)
    out = []
    for i in range(listed.size()):
        job = listed.apply(i)
        submitted = job.submissionTime().get().getTime() / 1000 if job.submissionTime().isDefined() else None
        if submitted is None or submitted < since:
            continue
        done = job.completionTime().get().getTime() / 1000 if job.completionTime().isDefined() else None
        out.append({"job": job.jobId(), "tasks": job.numTasks(), "atMs": round((submitted - since) * 1000),
                    "tookMs": None if done is None else round((done - submitted) * 1000)})
    return sorted(out, key=lambda j: j["job"])


def source_metrics(query, after: float = 0.0) -> dict:
    """The source's metrics in the query's last progress, if that trigger started after `after` (epoch s)."""
    progress = query.lastProgress
    if not progress or not progress.get("sources"):
        return {}
    if datetime.fromisoformat(progress["timestamp"].replace("Z", "+00:00")).timestamp() <= after:
        return {}
    return progress["sources"][0]["metrics"]


def jvm_cpu_seconds() -> float:
    """CPU time (user and system, seconds) the Spark JVM this process started has used so far: the driver and, in
    local mode, the executors' tasks. Read from /proc: the JVM is a descendant of this process running java."""
    tick = os.sysconf("SC_CLK_TCK")
    parents, stats = {}, {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                with open(f"/proc/{entry}/comm") as f:
                    comm = f.read().strip()
            except OSError:
                continue
            parents[int(entry)] = int(fields[1])
            stats[int(entry)] = (comm, (int(fields[11]) + int(fields[12])) / tick)

    def descends(pid: int) -> bool:
        while pid > 1:
            pid = parents.get(pid, 0)
            if pid == os.getpid():
                return True
        return False

    return sum(cpu for pid, (comm, cpu) in stats.items() if comm == "java" and descends(pid))


class Trickle:
    """Puts one record every `seconds` (a random partition key, so a random shard) until stopped, at most
    `limit` records; `acked` maps each record's id to when PutRecords acknowledged it."""

    def __init__(self, kinesis, stream: str, seconds: float, limit: int) -> None:
        self.kinesis, self.stream, self.seconds, self.limit = kinesis, stream, seconds, limit
        self.acked: dict[str, float] = {}
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self.run, name="trickle", daemon=True)

    def run(self) -> None:
        for i in range(self.limit):
            if self.stopped.wait(self.seconds):
                return
            record_id = f"trickle-{i}"
            streams.put_records(self.kinesis, self.stream, [(record_id, f"k{random.randrange(1 << 30)}")])
            self.acked[record_id] = time.time()

    def __enter__(self) -> "Trickle":
        self.thread.start()
        return self

    def __exit__(self, *_exc) -> None:
        self.stopped.set()
        self.thread.join(timeout=30)


def percentile(sorted_values: list, q: float):
    """Nearest-rank percentile: of 10 values, p50 is the 5th and p99 the 10th (the largest)."""
    return sorted_values[max(0, math.ceil(q * len(sorted_values)) - 1)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shards", type=int, default=100)
    parser.add_argument("--idle-minutes", type=int, default=10)
    parser.add_argument("--samples", type=int, default=10)
    parser.add_argument("--trickle-seconds", type=float, default=0.0,
                        help="during the measured minutes, put one record every this many seconds (0: none)")
    parser.add_argument("--name", default="bench-idle", help="results go to build/<name>.json")
    parser.add_argument("--jar", help="this connector jar instead of the installed one (an older build, to compare)")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                        help="a Spark setting for the session (e.g. spark.driver.extraJavaOptions for a profiler)")
    parser.add_argument("--plot", action="store_true", help="write docs/img/source-idle.png")
    parser.add_argument("--trace", action="store_true",
                        help="with each sample, the Spark jobs from the acknowledgement to foreachBatch")
    args = parser.parse_args()
    conf = {"spark.ui.retainedJobs": "100000", "spark.ui.showConsoleProgress": "false"}
    conf.update(dict(c.split("=", 1) for c in args.conf))
    spark = spark_session("idle-bench", conf, jars=args.jar)
    results: dict = {"shards": args.shards, "trickleSeconds": args.trickle_seconds, "minutes": [], "firstRecord": []}
    arrived: dict = {}

    with kinesalite() as (server, kinesis), FaultProxy(server) as proxy:
        stream = f"bench-idle-{uuid.uuid4().hex[:8]}"
        streams.create_stream(kinesis, stream, args.shards)
        df = read_stream(spark, stream, proxy.endpoint)
        with tempfile.TemporaryDirectory() as checkpoint:
            query = df.writeStream.foreachBatch(arrival_recorder(arrived)).option("checkpointLocation", checkpoint).start()
            wait_for(lambda: query.lastProgress is not None, 120, "the query's first progress")
            trickle = Trickle(kinesis, stream, args.trickle_seconds,
                              int(args.idle_minutes * 60 / args.trickle_seconds) if args.trickle_seconds else 0)
            measuring = time.time()
            with trickle:
                for minute in range(args.idle_minutes):
                    jobs, calls = job_count(spark), proxy.get_records_calls_by_stream().get(stream, 0)
                    driver = int(source_metrics(query).get("driverGetRecordsCalls", 0))
                    cpu, began = jvm_cpu_seconds(), time.time()
                    time.sleep(60)  # the measured minute itself
                    row = {"minute": minute + 1, "sparkJobs": job_count(spark) - jobs,
                           "getRecordsPerShard": round((proxy.get_records_calls_by_stream().get(stream, 0) - calls)
                                                       / args.shards, 1),
                           "driverCalls": int(source_metrics(query).get("driverGetRecordsCalls", 0)) - driver,
                           "jvmCpuSeconds": round(jvm_cpu_seconds() - cpu, 2)}
                    if args.trickle_seconds:
                        put = {k: t for k, t in list(trickle.acked.items()) if began <= t < began + 60}
                        delays = sorted(round((arrived[k] - t) * 1000) for k, t in put.items() if k in arrived)
                        row["trickleRecords"] = len(put)
                        row["trickleMillis"] = delays
                    print(json.dumps(row), flush=True)
                    results["minutes"].append(row)
            if trickle.acked:  # the trickle's records after the first minute (the quiet state settles in it)
                try:
                    wait_for(lambda: all(k in arrived for k in trickle.acked), 30, "the trickle's records arrive")
                except WaitFailed:
                    pass  # reported as missing below
                results["trickleMillis"] = sorted(round((arrived[k] - t) * 1000) for k, t in trickle.acked.items()
                                                  if k in arrived and t >= measuring + 60)
                results["trickleMissing"] = sorted(k for k in trickle.acked if k not in arrived)
            last_arrival = 0.0
            for sample in range(args.samples):
                # Quiet again: the driver watches every shard, the one with the last record included (a progress
                # from before that record's batch would say so too, hence `after`).
                wait_for(lambda: int(source_metrics(query, after=last_arrival).get("quietShards", 0)) == args.shards,
                         180, "every shard is quiet again", interval=0.5)
                time.sleep(random.uniform(0, 1))  # a random phase against the driver's one-second looks
                record_id = f"first-{sample}"
                streams.put_records(kinesis, stream, [(record_id, f"k{random.randrange(1 << 30)}")])
                acked = time.time()
                wait_for(lambda: record_id in arrived, 60, f"{record_id} reaches foreachBatch")
                last_arrival = arrived[record_id]
                row = {"sample": sample + 1, "millis": round((arrived[record_id] - acked) * 1000)}
                if args.trace:
                    row["jobs"] = jobs_since(spark, acked)
                print(json.dumps(row), flush=True)
                results["firstRecord"].append(row["millis"])
            query.stop()
    spark.stop()
    delays = sorted(results["firstRecord"])
    if delays:
        results["firstRecordSummary"] = {"samples": len(delays), "p50_ms": percentile(delays, 0.5),
                                         "p99_ms": percentile(delays, 0.99), "max_ms": delays[-1]}
    quiet = [m for m in results["minutes"] if m["minute"] >= 2]
    if quiet:
        results["quietSummary"] = {"maxJobsPerMinute": max(m["sparkJobs"] for m in quiet),
                                   "maxGetRecordsPerShardPerMinute": max(m["getRecordsPerShard"] for m in quiet),
                                   "maxJvmCpuSecondsPerMinute": max(m["jvmCpuSeconds"] for m in quiet)}
        trickled = results.get("trickleMillis", [])
        if trickled:
            results["trickleSummary"] = {"records": len(trickled), "missing": len(results["trickleMissing"]),
                                         "p50_ms": percentile(trickled, 0.5),
                                         "p99_ms": percentile(trickled, 0.99), "max_ms": trickled[-1]}
    print(json.dumps({"summary": {k: v for k, v in results.items() if k.endswith("Summary")}}), flush=True)
    write_results(args.name, results)
    if args.plot:
        plot(results)


def plot(results: dict) -> None:
    minutes = [m["minute"] for m in results["minutes"]]
    fig, ax = new_figure()
    ax.bar(minutes, [m["sparkJobs"] for m in results["minutes"]], 0.6, label="Spark jobs per minute")
    ax.plot(minutes, [m["getRecordsPerShard"] for m in results["minutes"]], "o-", color="tab:orange",
            label="GetRecords calls per shard per minute")
    ax.set_xlabel("minute of the idle run")
    ax.set_title(f"An idle query, {results['shards']} shards, kinesalite, local[2]")
    ax.legend()
    save_figure(fig, "source-idle")


if __name__ == "__main__":
    main()
