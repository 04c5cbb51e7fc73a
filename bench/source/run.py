#!/usr/bin/env python3
"""Source benchmarks (not part of CI). Results and commands: docs/performance.md, "Source".

* throughput: drain pre-written records (100 B and 1 KB, 4 shards) from kinesalite with Trigger.AvailableNow into
  the `noop` sink, against a plain SDK 2.x GetRecords loop over the same data (PlainGetRecords.java, the ceiling);
* latency: a steady writer at --rate records/s; the time from each record's PutRecords acknowledgement to its
  arrival in foreachBatch, p50 and p99, with the default trigger;
* idle cost: GetRecords calls per shard during --idle-seconds of an idle stream (counted by the fault proxy).

    make install-wheel && .venv/bin/python bench/source/run.py [--records 200000] [--repeat 4] [--plot]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

from common import (arrival_recorder, drain, kinesalite, new_figure, read_stream, save_figure, spark_session,
                    write_results)
from harness import streams
from harness.fault_proxy import FaultProxy


def fill(kinesis, stream: str, records: int, size: int) -> None:
    payload = "x" * size
    batch = []
    for i in range(records):
        batch.append((payload, f"k{i % 1024}"))
        if len(batch) == 5000:
            streams.put_records(kinesis, stream, batch)
            batch = []
    if batch:
        streams.put_records(kinesis, stream, batch)


def plain(server, stream: str, records: int) -> float:
    import pyspark

    from spark_kinesis import jar_path

    slf4j = sorted(str(p) for p in (Path(pyspark.__file__).parent / "jars").glob("slf4j-api-*.jar"))
    command = [shutil.which("java") or "java", "-Daws.cborEnabled=false", "-cp", os.pathsep.join([jar_path(), *slf4j]),
               str(Path(__file__).with_name("PlainGetRecords.java")), server.endpoint, stream, str(records)]
    out = subprocess.run(command, check=True, capture_output=True, text=True, timeout=900).stdout
    return json.loads(out.strip().splitlines()[-1])["recordsPerSecond"]


def latency(spark, kinesis, endpoint: str, rate: int, seconds: int) -> dict:
    stream = f"bench-latency-{uuid.uuid4().hex[:8]}"
    streams.create_stream(kinesis, stream, 4)
    acked: dict = {}
    arrived: dict = {}
    df = read_stream(spark, stream, endpoint)
    with tempfile.TemporaryDirectory() as checkpoint:
        query = df.writeStream.foreachBatch(arrival_recorder(arrived)).option("checkpointLocation", checkpoint).start()
        time.sleep(5)  # let the query reach its steady state before the clock matters
        next_id = 0
        start = time.monotonic()
        for second in range(seconds):
            for tick in range(10):  # ten puts per second, each of rate/10 records
                batch = [(str(next_id + i), f"k{(next_id + i) % 64}") for i in range(rate // 10)]
                next_id += len(batch)
                streams.put_records(kinesis, stream, batch)
                t = time.time()
                for data, _ in batch:
                    acked[data] = t
                pause = start + second + (tick + 1) / 10 - time.monotonic()
                if pause > 0:
                    time.sleep(pause)
        deadline = time.monotonic() + 60
        while len(arrived) < len(acked) and time.monotonic() < deadline:
            time.sleep(0.2)
        query.stop()
    delays = sorted(max(0.0, arrived[k] - acked[k]) for k in acked if k in arrived)
    pick = lambda q: delays[min(len(delays) - 1, int(q * len(delays)))]  # noqa: E731
    return {"records": len(acked), "delivered": len(delays), "p50_ms": round(pick(0.50) * 1000),
            "p99_ms": round(pick(0.99) * 1000), "max_ms": round(delays[-1] * 1000)}


def idle_cost(spark, server, kinesis, seconds: int) -> dict:
    stream = f"bench-idle-{uuid.uuid4().hex[:8]}"
    streams.create_stream(kinesis, stream, 4)
    with FaultProxy(server) as proxy:
        df = read_stream(spark, stream, proxy.endpoint)
        with tempfile.TemporaryDirectory() as checkpoint:
            query = df.writeStream.format("noop").option("checkpointLocation", checkpoint).start()
            time.sleep(5)
            before = dict(proxy.get_records_calls_by_shard())
            time.sleep(seconds)
            after = dict(proxy.get_records_calls_by_shard())
            batches = sum(1 for p in query.recentProgress if p["numInputRows"] > 0)
            query.stop()
    per_shard = [after.get(k, 0) - before.get(k, 0) for k in after if k[0] == stream]
    return {"seconds": seconds, "getRecordsPerShard": per_shard, "perShardPerMinute": round(
        max(per_shard) * 60 / seconds, 1), "batchesWithData": batches}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--sizes", default="100,1000")
    parser.add_argument("--repeat", type=int, default=4, help="pairs of runs (plain, connector) per record size")
    parser.add_argument("--no-warm-up", dest="warm_up", action="store_false",
                        help="skip the uncounted first connector run that warms up the JVM")
    parser.add_argument("--rate", type=int, default=1000)
    parser.add_argument("--latency-seconds", type=int, default=30)
    parser.add_argument("--idle-seconds", type=int, default=60)
    parser.add_argument("--plot", action="store_true", help="write docs/img/source-throughput.png")
    args = parser.parse_args()
    spark = spark_session("source-bench")
    results = {"throughput": [], "latency": None, "idle": None}
    with kinesalite() as (server, kinesis):
        for size in [int(s) for s in args.sizes.split(",")]:
            records = args.records if size <= 100 else args.records // 4
            stream = f"bench-{size}-{uuid.uuid4().hex[:8]}"
            streams.create_stream(kinesis, stream, 4)
            fill(kinesis, stream, records, size)
            if args.warm_up:
                drain(spark, server.endpoint, stream, records)  # JIT warm-up of the session: not counted
            rows = []
            for run in range(args.repeat):
                # Alternate which reader goes first: the local server's speed drifts within a session.
                first, second = ("plain", "connector") if run % 2 == 0 else ("connector", "plain")
                row = {"size": size, "records": records, "run": run}
                for name in (first, second):
                    row[name] = round(plain(server, stream, records) if name == "plain"
                                      else drain(spark, server.endpoint, stream, records))
                row["ratio"] = round(row["connector"] / row["plain"], 3)
                print(json.dumps(row), flush=True)
                rows.append(row)
            results["throughput"].extend(rows)
            summary = {"size": size, "records": records, "runs": len(rows),
                       "bestOverBest": round(max(r["connector"] for r in rows) / max(r["plain"] for r in rows), 3),
                       "medianRatio": round(statistics.median(r["ratio"] for r in rows), 3)}
            print(json.dumps({"summary": summary}), flush=True)
            results.setdefault("summary", []).append(summary)
            kinesis.delete_stream(StreamName=stream)
        results["latency"] = latency(spark, kinesis, server.endpoint, args.rate, args.latency_seconds)
        print(json.dumps({"latency": results["latency"]}), flush=True)
        results["idle"] = idle_cost(spark, server, kinesis, args.idle_seconds)
        print(json.dumps({"idle": results["idle"]}), flush=True)
    spark.stop()
    write_results("bench-source", results)
    if args.plot:
        plot(results)


def plot(results: dict) -> None:
    sizes = sorted({r["size"] for r in results["throughput"]})
    best = {(s, k): max(r[k] for r in results["throughput"] if r["size"] == s) for s in sizes for k in ("plain", "connector")}
    fig, ax = new_figure()
    xs = range(len(sizes))
    ax.bar([x - 0.2 for x in xs], [best[(s, "plain")] for s in sizes], 0.4, label="plain SDK GetRecords loop")
    ax.bar([x + 0.2 for x in xs], [best[(s, "connector")] for s in sizes], 0.4, label="connector, AvailableNow → noop")
    ax.set_xticks(list(xs), [f"{s} B records" for s in sizes])
    ax.set_ylabel("records / s (best run)")
    ax.set_title("Source throughput, kinesalite, 4 shards, local[2]")
    ax.legend()
    save_figure(fig, "source-throughput")


if __name__ == "__main__":
    main()
