#!/usr/bin/env python3
"""What an idle query costs, and how soon it notices the first record after a quiet spell (not part of CI).

Results and commands: docs/performance.md, "Idle cost". One query (default trigger, foreachBatch) on an idle
kinesalite stream of --shards shards, read through the fault proxy, which counts GetRecords calls per shard:

* each minute of --idle-minutes: the Spark jobs the application ran (from its status tracker), the GetRecords
  calls per shard, and the calls the driver made itself (the source's `driverGetRecordsCalls` metric);
* then --samples times: wait until the query is quiet again, put one record, and time its way from the
  PutRecords acknowledgement to foreachBatch.

    make bench-idle            # or: .venv/bin/python bench/source/idle.py --shards 100 --idle-minutes 10 --plot
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from harness import local_kinesis, streams  # noqa: E402
from harness.fault_proxy import FaultProxy  # noqa: E402

OPTIONS = {"region": "us-east-1", "awsAccessKeyId": "bench", "awsSecretKey": "bench", "cborEnabled": "false"}


def job_count(spark) -> int:
    """Jobs the application has started: job ids count up from 0."""
    ids = spark.sparkContext.statusTracker().getJobIdsForGroup(None)
    return max(ids) + 1 if ids else 0


def source_metrics(query) -> dict:
    progress = query.lastProgress
    return progress["sources"][0]["metrics"] if progress and progress.get("sources") else {}


def wait_until(condition, timeout: float, what: str, interval: float = 0.05):
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out after {timeout} s waiting until {what}")
        time.sleep(interval)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shards", type=int, default=100)
    parser.add_argument("--idle-minutes", type=int, default=10)
    parser.add_argument("--samples", type=int, default=10)
    parser.add_argument("--plot", action="store_true", help="write docs/img/source-idle.png")
    args = parser.parse_args()
    os.environ.setdefault("AWS_EC2_METADATA_DISABLED", "true")
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    from spark_kinesis import configure_spark_with_kinesis

    builder = (SparkSession.builder.master("local[2]").appName("idle-bench").config("spark.ui.enabled", "false")
               .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.ui.retainedJobs", "100000").config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.memory", "2g"))
    spark = configure_spark_with_kinesis(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    results: dict = {"shards": args.shards, "minutes": [], "firstRecord": []}
    arrived: dict = {}

    def on_batch(batch, _batch_id):
        now = time.time()
        for row in batch.selectExpr("CAST(data AS STRING) AS id").collect():
            arrived.setdefault(row.id, now)

    with local_kinesis.start(local_kinesis.KINESALITE) as server, FaultProxy(server) as proxy:
        kinesis = streams.client(server)
        stream = f"bench-idle-{uuid.uuid4().hex[:8]}"
        streams.create_stream(kinesis, stream, args.shards)
        df = (spark.readStream.format("kinesis")
              .options(streamName=stream, endpointUrl=proxy.endpoint, initialPosition="trim_horizon", **OPTIONS)
              .load())
        with tempfile.TemporaryDirectory() as checkpoint:
            query = df.writeStream.foreachBatch(on_batch).option("checkpointLocation", checkpoint).start()
            wait_until(lambda: query.lastProgress is not None, 120, "the query's first progress")
            for minute in range(args.idle_minutes):
                jobs, calls = job_count(spark), proxy.get_records_calls_by_stream().get(stream, 0)
                driver = int(source_metrics(query).get("driverGetRecordsCalls", 0))
                time.sleep(60)  # the measured minute itself
                row = {"minute": minute + 1, "sparkJobs": job_count(spark) - jobs,
                       "getRecordsPerShard": round((proxy.get_records_calls_by_stream().get(stream, 0) - calls)
                                                   / args.shards, 1),
                       "driverCalls": int(source_metrics(query).get("driverGetRecordsCalls", 0)) - driver}
                print(json.dumps(row), flush=True)
                results["minutes"].append(row)
            for sample in range(args.samples):
                # Quiet again: the driver is looking for records (its call count grows).
                seen = int(source_metrics(query).get("driverGetRecordsCalls", 0))
                wait_until(lambda: int(source_metrics(query).get("driverGetRecordsCalls", 0)) > seen + args.shards,
                           180, "the query is quiet again", interval=0.5)
                time.sleep(random.uniform(0, 1))  # a random phase against the driver's one-second looks
                record_id = f"first-{sample}"
                streams.put_records(kinesis, stream, [(record_id, f"k{random.randrange(1 << 30)}")])
                acked = time.time()
                wait_until(lambda: record_id in arrived, 60, f"{record_id} reaches foreachBatch")
                row = {"sample": sample + 1, "millis": round((arrived[record_id] - acked) * 1000)}
                print(json.dumps(row), flush=True)
                results["firstRecord"].append(row["millis"])
            query.stop()
    spark.stop()
    delays = sorted(results["firstRecord"])
    if delays:
        results["firstRecordSummary"] = {"p50_ms": delays[len(delays) // 2], "max_ms": delays[-1]}
    quiet = [m for m in results["minutes"] if m["minute"] >= 2]
    if quiet:
        results["quietSummary"] = {"maxJobsPerMinute": max(m["sparkJobs"] for m in quiet),
                                   "maxGetRecordsPerShardPerMinute": max(m["getRecordsPerShard"] for m in quiet)}
    print(json.dumps({"summary": {k: v for k, v in results.items() if k.endswith("Summary")}}), flush=True)
    out = ROOT / "build" / "bench-idle.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=2))
    if args.plot:
        plot(results)


def plot(results: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    minutes = [m["minute"] for m in results["minutes"]]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.bar(minutes, [m["sparkJobs"] for m in results["minutes"]], 0.6, label="Spark jobs per minute")
    ax.plot(minutes, [m["getRecordsPerShard"] for m in results["minutes"]], "o-", color="tab:orange",
            label="GetRecords calls per shard per minute")
    ax.set_xlabel("minute of the idle run")
    ax.set_title(f"An idle query, {results['shards']} shards, kinesalite, local[2]")
    ax.legend()
    fig.tight_layout()
    target = ROOT / "docs" / "img" / "source-idle.png"
    target.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(target, dpi=120)
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
