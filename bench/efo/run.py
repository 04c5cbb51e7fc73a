#!/usr/bin/env python3
"""Enhanced fan-out against polling, for this connector and the awslabs connector side by side (not part of CI).
Results and commands: docs/performance.md, "Enhanced fan-out against polling".

On kinesis-mock (the local server that serves SubscribeToShard), for each connector and each of its two modes:
* throughput: --records records of --size bytes pre-written to a --shards-shard stream, read from the trim
  horizon with the default trigger into a foreachBatch that counts them; records/s from the query's start to the
  last record (start-up included: registering a consumer, subscribing), and when the first rows came;
* latency: a writer in the same process puts --rate records/s for --latency-seconds into an empty stream the query
  reads; the time from each record's PutRecords acknowledgement to foreachBatch holding it (after its collect:
  the awslabs connector reads Kinesis while the batch runs), p50 and p99.

Every (connector, mode) runs in a Spark process of its own, so the two connectors' jars never share a JVM; all
use the same PySpark, server, record sizes and rates. The awslabs connector's jar is given with --peer-jar (build
it from its source: docs/performance.md); nothing is downloaded.

    make bench-efo [PEER_JAR=path/to/spark-streaming-sql-kinesis-connector.jar]
    .venv/bin/python bench/efo/run.py [--records 50000] [--peer-jar JAR] [--plot]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "source"))

from common import (ROOT, local_server, new_figure, phase_arguments, replot_or_child, run_child,  # noqa: E402
                    finish, results_table, save_figure, spark_session, write_at_rate)
from harness import local_kinesis, streams  # noqa: E402

CONNECTOR = "spark-kinesis"
PEER = "awslabs"
# (connector, mode as the connector names it, mode as the results name it)
RUNS = [(CONNECTOR, "polling", "polling"), (CONNECTOR, "efo", "efo"),
        (PEER, "GetRecords", "polling"), (PEER, "SubscribeToShard", "efo")]
KEYS = "bench-key", "bench-secret"


# --------------------------------------------------------------------------------------------------------------
# The child: one connector in one mode, in a Spark process of its own


def reader(spark, cfg: dict, stream: str):
    """The streaming DataFrame of `stream` from its trim horizon, through the connector and mode of `cfg`."""
    if cfg["connector"] == CONNECTOR:
        return (spark.readStream.format("kinesis")
                .options(streamName=stream, endpointUrl=cfg["endpoint"], region="us-east-1",
                         awsAccessKeyId=KEYS[0], awsSecretKey=KEYS[1], cborEnabled=cfg["cbor"],
                         initialPosition="trim_horizon", consumerMode=cfg["mode"],
                         **({"requireConsumerDeregistration": "true"} if cfg["mode"] == "efo" else {}))
                .load())
    options = {"kinesis.streamName": stream, "kinesis.endpointUrl": cfg["endpoint"], "kinesis.region": "us-east-1",
               "kinesis.awsAccessKeyId": KEYS[0], "kinesis.awsSecretKey": KEYS[1],
               "kinesis.startingPosition": "TRIM_HORIZON", "kinesis.consumerType": cfg["mode"]}
    if cfg["mode"] == "SubscribeToShard":
        options["kinesis.consumerName"] = f"bench-{uuid.uuid4().hex[:8]}"
    return spark.readStream.format("aws-kinesis").options(**options).load()


def throughput(spark, cfg: dict, work: Path) -> dict:
    """Counts the pre-written records through foreachBatch; records/s overall and after the first batch."""
    seen = {"rows": 0, "first": None}

    def on_batch(batch, _id: int) -> None:
        n = batch.count()
        if n and seen["first"] is None:
            seen["first"] = time.monotonic()
        seen["rows"] += n

    started = time.monotonic()
    query = (reader(spark, cfg, cfg["throughput_stream"]).selectExpr("CAST(data AS STRING) AS data")
             .writeStream.foreachBatch(on_batch).option("checkpointLocation", str(work / "tput")).start())
    deadline = started + cfg["timeout"]
    try:
        while seen["rows"] < cfg["records"] and time.monotonic() < deadline:
            if query.exception() is not None:
                return {"error": str(query.exception())[:2000]}
            time.sleep(0.05)
        done = time.monotonic()
    finally:
        query.stop()
    if seen["rows"] < cfg["records"]:
        return {"error": f"read {seen['rows']} of {cfg['records']} records in {cfg['timeout']} s"}
    total = done - started
    return {"records": seen["rows"], "seconds": round(total, 2), "records_per_s": round(seen["rows"] / total),
            "first_rows_after_s": round(seen["first"] - started, 2)}


def latency(spark, cfg: dict, work: Path, kinesis) -> dict:
    """Puts --rate records/s for --latency-seconds while the query runs; put-acknowledged-to-foreachBatch times."""
    arrived: dict = {}
    acked: dict = {}

    def on_batch(batch, _id: int) -> None:
        rows = batch.collect()  # a connector that reads Kinesis while the batch runs has its rows only now
        now = time.time()
        for row in rows:
            arrived.setdefault(row.id, now)

    query = (reader(spark, cfg, cfg["latency_stream"]).selectExpr("CAST(data AS STRING) AS id")
             .writeStream.foreachBatch(on_batch).option("checkpointLocation", str(work / "lat")).start())
    try:
        wait_until = time.monotonic() + 120
        while query.lastProgress is None and time.monotonic() < wait_until:  # the query runs: its first batch ended
            if query.exception() is not None:
                return {"error": str(query.exception())[:2000]}
            time.sleep(0.05)
        def put(first: int, count: int) -> None:
            ids = [f"r{first + i}" for i in range(count)]
            streams.put_records(kinesis, cfg["latency_stream"], [(i, i) for i in ids])
            now = time.time()
            for i in ids:
                acked[i] = now

        write_at_rate(put, cfg["rate"], cfg["latency_seconds"])
        deadline = time.monotonic() + 60
        while len(arrived) < len(acked) and time.monotonic() < deadline:
            if query.exception() is not None:
                break
            time.sleep(0.1)
    finally:
        query.stop()
    lat = sorted((arrived[i] - t) * 1000 for i, t in acked.items() if i in arrived)
    if not lat:
        return {"error": f"no record of {len(acked)} arrived"}
    return {"written": len(acked), "arrived": len(lat), "p50_ms": round(statistics.median(lat)),
            "p99_ms": round(lat[min(len(lat) - 1, int(len(lat) * 0.99))]), "max_ms": round(lat[-1])}


def child(cfg: dict) -> None:
    class Server:  # what streams.client needs of a server
        endpoint = cfg["endpoint"]
        cbor_enabled = cfg["cbor"] == "true"
    spark = spark_session(f"efo-bench-{cfg['connector']}-{cfg['mode']}",
                          jars=cfg.get("peer_jar") if cfg["connector"] == PEER else None)
    work = Path(tempfile.mkdtemp(prefix="efo-bench-"))
    result = {"throughput": throughput(spark, cfg, work)}
    result["latency"] = latency(spark, cfg, work, streams.client(Server()))
    Path(cfg["out"]).write_text(json.dumps(result))
    spark.stop()


# --------------------------------------------------------------------------------------------------------------
# The parent: the server, the data, one child per run, the table


def fill(kinesis, stream: str, records: int, size: int) -> None:
    payload = "x" * size
    for first in range(0, records, 500):
        streams.put_records(kinesis, stream, [(payload, f"k{i % 1024}") for i in range(first, min(records, first + 500))])


def versions(peer_jar: str | None) -> dict:
    import pyspark

    def git(*args: str, cwd: Path = ROOT) -> str:
        try:
            return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            return "unknown"

    package = json.loads((local_kinesis.KINESIS_MOCK_MAIN.parent / "package.json").read_text())
    return {"pyspark": pyspark.__version__, "spark-kinesis": (ROOT / "VERSION").read_text().strip(),
            "spark-kinesis commit": git("rev-parse", "--short", "HEAD"),
            "kinesis-mock (npm kinesis-local)": package["version"],
            "awslabs jar": Path(peer_jar).name if peer_jar else None}


def run_one(server, kinesis, args, connector: str, mode: str) -> dict:
    tag = uuid.uuid4().hex[:6]
    tput, lat = f"efo-bench-t-{tag}", f"efo-bench-l-{tag}"
    streams.create_stream(kinesis, tput, args.shards)
    streams.create_stream(kinesis, lat, args.shards)
    fill(kinesis, tput, args.records, args.size)
    cfg = {"connector": connector, "mode": mode, "endpoint": server.endpoint,
           "cbor": str(server.cbor_enabled).lower(), "throughput_stream": tput, "latency_stream": lat,
           "records": args.records, "rate": args.rate, "latency_seconds": args.latency_seconds,
           "timeout": args.timeout, "peer_jar": args.peer_jar}
    started = time.monotonic()
    result = run_child(__file__, cfg, args.timeout * 2 + args.latency_seconds + 300)
    print(f"{connector} {mode}: {json.dumps(result)} ({time.monotonic() - started:.0f} s)", flush=True)
    for s in (tput, lat):
        streams.delete_stream(kinesis, s, missing_ok=True)
    return result


def table(results: list) -> str:
    return results_table(results, ["connector", "mode"], [
        ("records/s", "throughput", "records_per_s"), ("first rows after (s)", "throughput", "first_rows_after_s"),
        ("latency p50 (ms)", "latency", "p50_ms"), ("p99 (ms)", "latency", "p99_ms")])


def plot(results: list) -> None:
    ok = [r for r in results if "records_per_s" in r["result"].get("throughput", {})
          and "p50_ms" in r["result"].get("latency", {})]
    if not ok:
        return
    labels = [f"{r['connector']}\n{r['mode']}" for r in ok]
    fig, _ = new_figure()
    fig.clf()
    left, right = fig.subplots(1, 2)
    left.bar(labels, [r["result"]["throughput"]["records_per_s"] for r in ok], color="#4878a8")
    left.set_title("throughput (records/s)", fontsize=9)
    p50 = [r["result"]["latency"]["p50_ms"] for r in ok]
    p99 = [r["result"]["latency"]["p99_ms"] for r in ok]
    xs = range(len(ok))
    right.bar([x - 0.2 for x in xs], p50, width=0.4, label="p50", color="#4878a8")
    right.bar([x + 0.2 for x in xs], p99, width=0.4, label="p99", color="#d08040")
    right.set_xticks(list(xs), labels)
    right.set_yscale("log")
    right.set_title("put-to-row latency (ms, log scale)", fontsize=9)
    right.legend(fontsize=7)
    for ax in (left, right):
        ax.tick_params(labelsize=6)
    save_figure(fig, "efo-bench")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    phase_arguments(parser, "efo-bench", records=50_000)
    parser.add_argument("--latency-seconds", type=int, default=30)
    parser.add_argument("--peer-jar", help="the awslabs connector's jar (built from its source); without it, only "
                                           "this connector runs")
    args = parser.parse_args()
    if replot_or_child(args, "efo-bench", plot, child):
        return
    if args.peer_jar and not Path(args.peer_jar).is_file():
        parser.error(f"--peer-jar {args.peer_jar}: no such file")
    runs = [(c, m, k) for c, m, k in RUNS if c == CONNECTOR or args.peer_jar]
    results = []
    with local_server(local_kinesis.KINESIS_MOCK) as (server, kinesis):
        for connector, mode, kind in runs:
            results.append({"connector": connector, "mode": kind, "result": run_one(server, kinesis, args,
                                                                                     connector, mode)})
    summary = {"versions": versions(args.peer_jar), "records": args.records, "size": args.size,
               "shards": args.shards, "rate": args.rate, "latency_seconds": args.latency_seconds,
               "runs": results}
    finish("efo-bench", summary, table(results), plot if args.plot else None)


if __name__ == "__main__":
    main()
