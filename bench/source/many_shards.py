#!/usr/bin/env python3
"""Draining many shards (not part of CI). Results and commands: docs/performance.md, "Many shards".

For each --shards count: a kinesalite stream with that many shards holding --records records of 100 B, drained

* by a one-thread boto3 loop (GetShardIterator at the trim horizon, then GetRecords of up to 10,000 until the shard
  answers nothing at its tip), shard after shard: what one plain Python thread reaches on the same server;
* by the connector: Trigger.AvailableNow into the `noop` sink, in a fresh Spark process per run (local[2]), timed
  from `start()` to the query's end (query start included), with the prefetch rounds' and batches' tasks counted;
  with --jar, also by that jar (an older build, side by side).

    make bench-many-shards     # = .venv/bin/python bench/source/many_shards.py --plot
    .venv/bin/python bench/source/many_shards.py --shards 200 --records 40000 --repeat 2 --jar /path/old.jar
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import uuid

from common import kinesalite, new_figure, save_figure, spark_session, write_results
from harness import local_kinesis, streams


def fill(kinesis, stream: str, records: int) -> None:
    payload = "x" * 100
    for start in range(0, records, 5000):
        streams.put_records(kinesis, stream, [(payload, f"k{i}") for i in range(start, min(start + 5000, records))])


def loop(kinesis, stream: str, records: int) -> float:
    """Records per second of one thread reading every shard in turn."""
    shards = [s["ShardId"] for s in streams.list_shards(kinesis, stream)]
    began = time.monotonic()
    read = 0
    for shard in shards:
        iterator = kinesis.get_shard_iterator(StreamName=stream, ShardId=shard,
                                              ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        while iterator:
            page = kinesis.get_records(ShardIterator=iterator, Limit=10000)
            read += len(page["Records"])
            iterator = page.get("NextShardIterator")
            if not page["Records"] and page.get("MillisBehindLatest", 0) == 0:
                break
    seconds = time.monotonic() - began
    if read != records:
        raise SystemExit(f"the loop read {read} records of {records}")
    return records / seconds


def child(spec: dict) -> None:
    """One connector run in this (fresh) process; prints its result as JSON."""
    spark = spark_session("many-shards", {"spark.ui.showConsoleProgress": "false"}, jars=spec.get("jar"))
    df = (spark.readStream.format("kinesis")
          .options(streamName=spec["stream"], endpointUrl=spec["endpoint"], initialPosition="trim_horizon",
                   region="us-east-1", awsAccessKeyId="bench", awsSecretKey="bench", cborEnabled="false").load())
    with tempfile.TemporaryDirectory() as checkpoint:
        began = time.monotonic()
        query = df.writeStream.format("noop").option("checkpointLocation", checkpoint).trigger(availableNow=True).start()
        query.awaitTermination(spec["timeout"])
        seconds = time.monotonic() - began
        progress = query.recentProgress
        rows = sum(p["numInputRows"] for p in progress)
        if query.isActive:
            query.stop()
            raise SystemExit(f"the query did not end within {spec['timeout']} s ({rows} rows)")
    listed = spark.sparkContext._jsc.sc().statusStore().jobsList(None)
    jobs = [listed.apply(i) for i in range(listed.size())]
    print(json.dumps({"seconds": seconds, "rows": rows, "batches": len([p for p in progress if p["numInputRows"]]),
                      "jobs": len(jobs), "tasks": sum(j.numTasks() for j in jobs),
                      "durationsMs": [p["durationMs"] for p in progress]}), flush=True)
    spark.stop()


def connector(endpoint: str, stream: str, records: int, jar: str | None, timeout: int) -> dict:
    spec = {"endpoint": endpoint, "stream": stream, "jar": jar, "timeout": timeout}
    out = subprocess.run([sys.executable, __file__, "--child", json.dumps(spec)], capture_output=True, text=True,
                         timeout=timeout + 120)
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    if out.returncode != 0 or not lines:
        raise SystemExit(f"connector run failed ({out.returncode}):\n{out.stdout[-2000:]}\n{out.stderr[-4000:]}")
    result = json.loads(lines[-1])
    if result["rows"] != records:
        raise SystemExit(f"the connector read {result['rows']} rows of {records}")
    result["recordsPerSecond"] = records / result["seconds"]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--shards", default="200,1000", help="comma-separated shard counts")
    parser.add_argument("--records", default="40000,100000", help="records per shard count, comma-separated")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each reader per shard count")
    parser.add_argument("--jar", help="also run this connector jar (an older build), side by side")
    parser.add_argument("--timeout", type=int, default=600, help="seconds a connector run may take")
    parser.add_argument("--plot", action="store_true", help="write docs/img/source-many-shards.png")
    args = parser.parse_args()
    if args.child:
        child(json.loads(args.child))
        return
    results = []
    with kinesalite() as (server, kinesis):
        for shards, records in zip(map(int, args.shards.split(",")), map(int, args.records.split(","))):
            stream = f"bench-shards-{shards}-{uuid.uuid4().hex[:6]}"
            streams.create_stream(kinesis, stream, shards, timeout=600)
            fill(kinesis, stream, records)
            row: dict = {"shards": shards, "records": records, "loop": [], "connector": [], "jar": []}
            for _ in range(args.repeat):  # in turn, so that a slower spell of the machine touches each alike
                row["loop"].append(round(loop(kinesis, stream, records)))
                row["connector"].append(connector(server.endpoint, stream, records, None, args.timeout))
                if args.jar:
                    row["jar"].append(connector(server.endpoint, stream, records, args.jar, args.timeout))
            best = max(row["loop"])
            row["ratio"] = round(max(r["recordsPerSecond"] for r in row["connector"]) / best, 2)
            if args.jar:
                row["jarRatio"] = round(max(r["recordsPerSecond"] for r in row["jar"]) / best, 2)
            print(json.dumps(row), flush=True)
            results.append(row)
            streams.delete_stream(kinesis, stream, timeout=600)
    write_results("bench-many-shards", {"runs": results})
    if args.plot:
        plot(results)


def plot(results: list) -> None:
    fig, ax = new_figure()
    labels = [f"{r['shards']} shards" for r in results]
    xs = range(len(results))
    ax.bar([x - 0.25 for x in xs], [max(r["loop"]) for r in results], 0.25, label="one-thread boto3 loop")
    ax.bar(list(xs), [max(c["recordsPerSecond"] for c in r["connector"]) for r in results], 0.25, label="connector")
    if any(r["jar"] for r in results):
        ax.bar([x + 0.25 for x in xs], [max((c["recordsPerSecond"] for c in r["jar"]), default=0) for r in results],
               0.25, label="before (older jar)")
    ax.set_xticks(list(xs), labels)
    ax.set_ylabel("records/s (best run)")
    ax.set_title("Draining many shards, kinesalite, local[2]")
    ax.legend()
    save_figure(fig, "source-many-shards")


if __name__ == "__main__":
    main()
