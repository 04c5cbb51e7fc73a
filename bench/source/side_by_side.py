#!/usr/bin/env python3
"""A query's fixed cost, side by side (issue 52; not part of CI). Results and commands: docs/performance.md,
"Side by side".

For each shape (shards x records of 100 B, pre-written to kinesalite), in alternating rounds, each contender in a
fresh process (a cold JVM, as a scheduled job starts):

* `loop`: one boto3 thread, GetShardIterator at the trim horizon then GetRecords of up to 10,000 until the shard's
  tip, shard after shard (the client loop a user would write instead of a query);
* `connector`: this connector, Trigger.AvailableNow into the `noop` sink, local[2], timed from `start()` to the
  query's end (query start included);
* `awslabs`: the awslabs connector (built from its source, --peer-jar), the same query;
* `files`: Spark's own file source reading the same number of 100 B lines from a local text file, the same query:
  what Spark's query start and batches cost with no Kinesis in them;
* `jar`: this connector from another jar (--jar, an older build), the same query.

Each connector run records Spark's progress phases (latestOffset, queryPlanning, addBatch, walCommit,
commitOffsets) of every batch, the time from `start()` to the first batch's start and end, the Spark jobs and tasks
it ran, and (for this connector) the time the session took to start.

    make bench-side-by-side PEER_JAR=path/to/spark-streaming-sql-kinesis-connector_2.13-2.1.0-SNAPSHOT.jar
    make bench-many-shards     # = side_by_side.py --shapes 200x40000,1000x100000 --contenders loop,connector
    .venv/bin/python bench/source/side_by_side.py --shapes 4x100000 --repeat 3 --contenders loop,connector,jar \
        --jar /path/old.jar
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
import uuid

from common import OPTIONS, available_now, in_fresh_process, kinesalite, new_figure, save_figure, spark_session, write_results
from harness import streams

PHASES = ["latestOffset", "queryPlanning", "addBatch", "walCommit", "commitOffsets"]


def fill(kinesis, stream: str, records: int) -> None:
    payload = "x" * 100
    for start in range(0, records, 5000):
        streams.put_records(kinesis, stream, [(payload, f"k{i}") for i in range(start, min(start + 5000, records))])


def loop(spec: dict) -> dict:
    """One boto3 thread reading every shard in turn, in this (fresh) process."""
    import boto3
    from botocore.config import Config

    began = time.monotonic()
    kinesis = boto3.client("kinesis", endpoint_url=spec["endpoint"], region_name="us-east-1",
                           aws_access_key_id="bench", aws_secret_access_key="bench",
                           config=Config(retries={"max_attempts": 10, "mode": "standard"}))
    shards = [s["ShardId"] for s in streams.list_shards(kinesis, spec["stream"])]
    read = 0
    for shard in shards:
        iterator = kinesis.get_shard_iterator(StreamName=spec["stream"], ShardId=shard,
                                              ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        while iterator:
            page = kinesis.get_records(ShardIterator=iterator, Limit=10000)
            read += len(page["Records"])
            iterator = page.get("NextShardIterator")
            if not page["Records"] and page.get("MillisBehindLatest", 0) == 0:
                break
    return {"seconds": time.monotonic() - began, "rows": read}


def query(spec: dict) -> dict:
    """One AvailableNow query of the contender `spec["kind"]` in this (fresh) process."""
    began = time.monotonic()
    kind = spec["kind"]
    conf = {"spark.ui.showConsoleProgress": "false"}
    if kind == "awslabs":
        conf["spark.driver.extraJavaOptions"] = "-Daws.cborEnabled=false"
    jars = {"awslabs": spec.get("peerJar"), "jar": spec.get("jar")}.get(kind)
    spark = spark_session(f"side-by-side-{kind}", conf, jars=jars)
    session = time.monotonic() - began
    if kind in ("connector", "jar"):
        df = (spark.readStream.format("kinesis")
              .options(streamName=spec["stream"], endpointUrl=spec["endpoint"], initialPosition="trim_horizon",
                       **OPTIONS).load())
    elif kind == "awslabs":
        df = (spark.readStream.format("aws-kinesis")
              .options(**{"kinesis.streamName": spec["stream"], "kinesis.endpointUrl": spec["endpoint"],
                          "kinesis.region": "us-east-1", "kinesis.awsAccessKeyId": "bench",
                          "kinesis.awsSecretKey": "bench", "kinesis.startingPosition": "TRIM_HORIZON"}).load())
    else:
        df = spark.readStream.format("text").load(spec["files"])
    started_ms, seconds, progress = available_now(df, spec["timeout"], kind)
    batches = [p for p in progress if p["numInputRows"]]
    first = batches[0] if batches else None
    listed = spark.sparkContext._jsc.sc().statusStore().jobsList(None)
    jobs = [listed.apply(i) for i in range(listed.size())]
    def since(date) -> float | None:
        return round((date.get().getTime() - started_ms) / 1000, 3) if date.isDefined() else None

    timeline = [{"job": j.jobId(), "submitted": since(j.submissionTime()), "completed": since(j.completionTime()),
                 "tasks": j.numTasks()} for j in sorted(jobs, key=lambda j: j.jobId())]
    result = {"seconds": seconds, "session": session, "rows": sum(p["numInputRows"] for p in progress),
              "batches": len(batches), "jobs": len(jobs), "tasks": sum(j.numTasks() for j in jobs),
              "timeline": timeline,
              "phases": [{k: p["durationMs"].get(k, 0) for k in PHASES + ["triggerExecution"]} for p in progress]}
    if first:
        from datetime import datetime
        began_ms = datetime.fromisoformat(first["timestamp"].replace("Z", "+00:00")).timestamp() * 1000
        result["firstBatchStart"] = (began_ms - started_ms) / 1000
        result["firstBatchEnd"] = (began_ms + first["durationMs"]["triggerExecution"] - started_ms) / 1000
    spark.stop()
    return result


def run(spec: dict) -> dict:
    """`spec` in a fresh Python process (a fresh JVM for the queries); its result, checked for the row count."""
    result = in_fresh_process(__file__, spec, spec["timeout"] + 180)
    if result["rows"] != spec["records"]:
        raise SystemExit(f"{spec['kind']} read {result['rows']} rows of {spec['records']}")
    return result


def child(spec: dict) -> None:
    result = loop(spec) if spec["kind"] == "loop" else query(spec)
    print(json.dumps(result), flush=True)


def text_files(directory: str, records: int, files: int = 4) -> str:
    """`records` lines of 100 B in `files` text files under `directory` (Spark's file source reads them)."""
    line = "x" * 100 + "\n"
    per = -(-records // files)
    for n in range(files):
        count = min(per, records - n * per)
        with open(os.path.join(directory, f"part-{n}.txt"), "w") as f:
            f.write(line * count)
    return directory


def summary(runs: list[dict]) -> dict:
    out = {"median": round(statistics.median(r["seconds"] for r in runs), 2),
           "runs": [round(r["seconds"], 2) for r in runs]}
    phased = [r for r in runs if "phases" in r]
    if phased:
        out["firstBatchEnd"] = round(statistics.median(r.get("firstBatchEnd", r["seconds"]) for r in phased), 2)
        out["session"] = round(statistics.median(r["session"] for r in phased), 2)
        out["batches"] = phased[0]["batches"]
        out["tasks"] = phased[0]["tasks"]
        for k in PHASES:
            out[k] = round(statistics.median(sum(p[k] for p in r["phases"]) for r in phased) / 1000, 2)
        out["firstLatestOffset"] = round(statistics.median(r["phases"][0]["latestOffset"] for r in phased) / 1000, 2)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--shapes", default="4x100000,200x40000,1000x100000",
                        help="shards x records, comma-separated")
    parser.add_argument("--repeat", type=int, default=3, help="rounds; each runs every contender once, in turn")
    parser.add_argument("--contenders", default="loop,connector,awslabs,files")
    parser.add_argument("--peer-jar", default=os.environ.get("PEER_JAR"),
                        help="the awslabs connector's jar, built from its source (without it, no awslabs runs)")
    parser.add_argument("--jar", help="this connector's jar of another build (an older one), as the contender `jar`")
    parser.add_argument("--timeout", type=int, default=600, help="seconds a query may take")
    parser.add_argument("--plot", action="store_true", help="write docs/img/<--name>.png")
    parser.add_argument("--name", default="source-side-by-side", help="the results' name (build/, docs/img/)")
    args = parser.parse_args()
    if args.child:
        child(json.loads(args.child))
        return
    contenders = [c for c in args.contenders.split(",") if (c != "awslabs" or args.peer_jar) and (c != "jar" or args.jar)]
    if args.jar and "jar" not in contenders:
        contenders.append("jar")
    results = []
    with kinesalite() as (server, kinesis), tempfile.TemporaryDirectory() as files:
        for shape in args.shapes.split(","):
            shards, records = map(int, shape.split("x"))
            stream = f"bench-side-{shards}-{uuid.uuid4().hex[:6]}"
            streams.create_stream(kinesis, stream, shards, timeout=600)
            fill(kinesis, stream, records)
            shape_files = text_files(tempfile.mkdtemp(dir=files), records)
            runs: dict[str, list] = {c: [] for c in contenders}
            for n in range(args.repeat):
                # In turn, the order rotating, so that a slower spell of the machine or server touches each alike.
                order = contenders[n % len(contenders):] + contenders[:n % len(contenders)]
                for kind in order:
                    spec = {"kind": kind, "endpoint": server.endpoint, "stream": stream, "records": records,
                            "timeout": args.timeout, "peerJar": args.peer_jar, "files": shape_files, "jar": args.jar}
                    runs[kind].append(run(spec))
                    print(json.dumps({"shape": shape, "kind": kind, "seconds": round(runs[kind][-1]["seconds"], 2)}),
                          flush=True)
            row = {"shards": shards, "records": records, **{k: summary(v) for k, v in runs.items()}, "raw": runs}
            if "loop" in runs and "connector" in runs:
                row["connectorOverLoop"] = round(row["loop"]["median"] / row["connector"]["median"], 2)
            if "awslabs" in runs and "connector" in runs:
                row["connectorOverAwslabs"] = round(row["awslabs"]["median"] / row["connector"]["median"], 2)
            if "files" in runs and "connector" in runs:
                row["connectorOverFiles"] = round(row["files"]["median"] / row["connector"]["median"], 2)
            print(json.dumps({k: v for k, v in row.items() if k != "raw"}), flush=True)
            results.append(row)
            streams.delete_stream(kinesis, stream, timeout=600)
    write_results(f"bench-{args.name}", {"shapes": results})
    if args.plot:
        plot(results, args.name)


def plot(results: list, name: str) -> None:
    """Seconds per contender and shape, the connector's bar split into its phases."""
    fig, ax = new_figure()
    kinds = [k for k in ("loop", "connector", "jar", "awslabs", "files") if any(k in r for r in results)]
    width = 0.8 / len(kinds)
    for i, kind in enumerate(kinds):
        xs = [n + (i - (len(kinds) - 1) / 2) * width for n in range(len(results))]
        ax.bar(xs, [r[kind]["median"] if kind in r else 0 for r in results], width, label=kind)
    ax.set_xticks(range(len(results)), [f"{r['shards']} x {r['records']:,}" for r in results])
    ax.set_ylabel("seconds, median (fresh process)")
    ax.set_title("Draining a stream, side by side (kinesalite, local[2])")
    ax.legend()
    save_figure(fig, name)


if __name__ == "__main__":
    main()
