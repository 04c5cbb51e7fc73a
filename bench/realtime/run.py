#!/usr/bin/env python3
"""Real-time mode against the default micro-batch trigger, Kinesis to Kinesis (not part of CI).
Results and commands: docs/performance.md, "Real-time mode".

On a local server, the same pipeline runs in each mode, in a Spark process of its own: read an input stream with
the connector, write every record unchanged to an output stream with the connector. Two phases per mode:
* latency: a writer puts --rate records/s for --seconds into the input stream while the query runs; each record's
  latency is its arrival in the output stream minus its arrival in the input stream, both ApproximateArrival-
  Timestamps of the same server (no clock between processes is involved); p50, p99, max;
* throughput: --records records of --size bytes pre-written to another input stream, read from the trim horizon;
  records/s from the query's start to the last record's arrival in the output stream (start-up included).

Real-time mode reads with minFetchPeriod --fetch-period (GetRecords per shard) and writes with maxRecordDelay
--record-delay, batches of --batch-duration; the micro-batch run uses the default trigger and options.

    make bench-realtime
    .venv/bin/python bench/realtime/run.py [--server kinesalite] [--rate 200] [--plot]
"""

from __future__ import annotations

import argparse
import json
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

MODES = ("micro-batch", "real-time")
KEYS = {"region": "us-east-1", "awsAccessKeyId": "bench", "awsSecretKey": "bench"}


# --------------------------------------------------------------------------------------------------------------
# The child: one mode in a Spark process of its own


def start_pipeline(spark, cfg: dict, source: str, target: str, checkpoint: str):
    """The Kinesis-to-Kinesis query of `cfg`'s mode from `source`'s trim horizon into `target`."""
    connection = dict(KEYS, endpointUrl=cfg["endpoint"], cborEnabled=cfg["cbor"])
    read = dict(connection, streamName=source, initialPosition="trim_horizon")
    write = dict(connection, streamName=target)
    if cfg["mode"] == "real-time":
        read["minFetchPeriod"] = cfg["fetch_period"]
        write["maxRecordDelay"] = cfg["record_delay"]
    frame = spark.readStream.format("kinesis").options(**read).load().select("data", "partitionKey")
    writer = (frame.writeStream.format("kinesis").options(**write).option("checkpointLocation", checkpoint))
    if cfg["mode"] == "real-time":
        # Spark tracks a real-time query's progress asynchronously only for the sinks it knows: `sync` turns that
        # off (the offset and commit logs are written between batches), `async` lifts Spark's check for this sink.
        tracking = ({"asyncProgressTrackingEnabled": "false"} if cfg.get("progress_tracking", "sync") == "sync"
                    else {"_asyncProgressTrackingOverrideSinkSupportCheck": "true"})
        writer = writer.options(**tracking).outputMode("update").trigger(realTime=cfg["batch_duration"])
    return writer.start()


def output_count(kinesis, stream: str) -> int:
    return len(streams.read_all(kinesis, stream))


def wait_for_output(query, kinesis, stream: str, count: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if query.exception() is not None:
            raise RuntimeError(str(query.exception())[:2000])
        if output_count(kinesis, stream) >= count:
            return True
        time.sleep(0.5)
    return False


def latency(spark, cfg: dict, kinesis, work: Path) -> dict:
    source, target = cfg["streams"]["latency_in"], cfg["streams"]["latency_out"]
    query = start_pipeline(spark, cfg, source, target, str(work / "lat"))
    try:
        # A first record through the pipeline: the query runs (and, in real-time mode, its first batch).
        streams.put_records(kinesis, source, [("warm-up", "k")])
        if not wait_for_output(query, kinesis, target, 1, 180):
            return {"error": "the warm-up record did not come through in 180 s"}
        written = write_at_rate(
            lambda first, count: streams.put_records(
                kinesis, source, [(f"r{first + i}", f"k{(first + i) % 64}") for i in range(count)]),
            cfg["rate"], cfg["seconds"], tick=0.05)
        if not wait_for_output(query, kinesis, target, written + 1, 120):
            return {"error": f"not every one of {written} records came through in 120 s"}
        # Each batch's start (the progress's trigger time, epoch ms) and where its time went outside its tasks.
        batches = [{"batchId": p["batchId"], "startMs": round(iso_millis(p["timestamp"])), "durationMs": p["durationMs"]}
                   for p in query.recentProgress]
    finally:
        query.stop()
    arrived_in = {bytes(r["data"]).decode(): r["arrival_timestamp"] for r in streams.read_all(kinesis, source)}
    arrived_out = {}
    for r in streams.read_all(kinesis, target):
        arrived_out.setdefault(bytes(r["data"]).decode(), r["arrival_timestamp"])
    series = sorted((t.timestamp() * 1000, (arrived_out[k] - t).total_seconds() * 1000) for k, t in arrived_in.items()
                    if k != "warm-up" and k in arrived_out)
    lat = sorted(x for _, x in series)
    return {"written": written, "arrived": len(lat), "p50_ms": round(lat[len(lat) // 2]),
            "p99_ms": round(lat[min(len(lat) - 1, int(len(lat) * 0.99))]),
            "p999_ms": round(lat[min(len(lat) - 1, int(len(lat) * 0.999))]), "max_ms": round(lat[-1]),
            "latencies_ms": [round(x, 1) for x in lat],
            "series": [[round(t), round(x, 1)] for t, x in series], "batches": batches}


def iso_millis(text: str) -> float:
    """Epoch milliseconds of a progress timestamp (ISO 8601, UTC, 'Z')."""
    from datetime import datetime
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000


def throughput(spark, cfg: dict, kinesis, work: Path) -> dict:
    source, target = cfg["streams"]["throughput_in"], cfg["streams"]["throughput_out"]
    started = time.time()
    query = start_pipeline(spark, cfg, source, target, str(work / "tput"))
    try:
        if not wait_for_output(query, kinesis, target, cfg["records"], cfg["timeout"]):
            return {"error": f"not every one of {cfg['records']} records came through in {cfg['timeout']} s"}
    finally:
        query.stop()
    last = max(r["arrival_timestamp"] for r in streams.read_all(kinesis, target)).timestamp()
    seconds = last - started
    return {"records": cfg["records"], "seconds": round(seconds, 2), "records_per_s": round(cfg["records"] / seconds)}


def child(cfg: dict) -> None:
    class Server:  # what streams.client needs of a server
        endpoint = cfg["endpoint"]
        cbor_enabled = cfg["cbor"] == "true"
    # A real-time batch holds a task slot per shard for its whole length: both modes get the same cores, more
    # than the shards (the tasks mostly wait on the server).
    conf = {"spark.master": f"local[{cfg['slots']}]"}
    if cfg["mode"] == "real-time":
        conf["spark.sql.streaming.realTimeMode.allowlistCheck"] = "false"
    spark = spark_session(f"realtime-bench-{cfg['mode']}", conf=conf)
    kinesis = streams.client(Server())
    work = Path(tempfile.mkdtemp(prefix="realtime-bench-"))
    result = {"latency": latency(spark, cfg, kinesis, work), "throughput": throughput(spark, cfg, kinesis, work)}
    Path(cfg["out"]).write_text(json.dumps(result))
    spark.stop()


# --------------------------------------------------------------------------------------------------------------
# The parent: the server, the data, one child per mode, the table


def versions(server_kind: str) -> dict:
    import pyspark

    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                                check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    return {"pyspark": pyspark.__version__, "spark-kinesis commit": commit, "server": server_kind}


def run_one(server, kinesis, args, mode: str) -> dict:
    tag = uuid.uuid4().hex[:6]
    names = {k: f"rt-bench-{k.replace('_', '-')}-{tag}" for k in
             ("latency_in", "latency_out", "throughput_in", "throughput_out")}
    for name in names.values():
        streams.create_stream(kinesis, name, args.shards)
    payload = "x" * args.size
    for first in range(0, args.records, 500):
        streams.put_records(kinesis, names["throughput_in"],
                            [(payload, f"k{i % 1024}") for i in range(first, min(args.records, first + 500))])
    cfg = {"mode": mode, "endpoint": server.endpoint, "cbor": str(server.cbor_enabled).lower(), "streams": names,
           "records": args.records, "rate": args.rate, "seconds": args.seconds, "timeout": args.timeout,
           "fetch_period": args.fetch_period, "record_delay": args.record_delay,
           "batch_duration": args.batch_duration, "progress_tracking": args.progress_tracking,
           "slots": args.shards + 2}
    started = time.monotonic()
    result = run_child(__file__, cfg, args.timeout * 2 + args.seconds + 600)
    shown = {k: ({x: y for x, y in v.items() if x not in ("latencies_ms", "series")} if isinstance(v, dict) else v)
             for k, v in result.items()}
    print(f"{mode}: {json.dumps(shown)} ({time.monotonic() - started:.0f} s)", flush=True)
    for line in batch_end_summary(result.get("latency", {})):
        print(f"{mode}: {line}", flush=True)
    for name in names.values():
        streams.delete_stream(kinesis, name, missing_ok=True)
    return result


def batch_ends(latency: dict) -> list:
    """Epoch millis each real-time batch ended: its trigger's start plus the trigger's time."""
    return [b["startMs"] + b["durationMs"]["triggerExecution"] for b in latency.get("batches", [])]


def batch_end_summary(latency: dict) -> list:
    """Per batch end, the records put within 1 s of it (their max latency and how many took over 100 ms), and
    the max of the records put more than 2 s from every end: how much of the tail the batch ends make."""
    series, ends = latency.get("series") or [], batch_ends(latency)
    if not series or not ends:
        return []
    lines = []
    for i, end in enumerate(ends):
        near = [x for t, x in series if abs(t - end) <= 1000]
        if near:
            lines.append(f"end of batch {i}: {len(near)} records put within 1 s, max {max(near):.0f} ms, "
                         f"{sum(x > 100 for x in near)} over 100 ms")
    far = [x for t, x in series if all(abs(t - e) > 2000 for e in ends)]
    if far:
        lines.append(f"more than 2 s from a batch end: {len(far)} records, max {max(far):.0f} ms, "
                     f"{sum(x > 100 for x in far)} over 100 ms")
    return lines


def table(results: list) -> str:
    return results_table(results, ["mode"], [
        ("latency p50 (ms)", "latency", "p50_ms"), ("p99 (ms)", "latency", "p99_ms"),
        ("p99.9 (ms)", "latency", "p999_ms"), ("max (ms)", "latency", "max_ms"),
        ("records/s (backlog)", "throughput", "records_per_s")])


def plot(results: list) -> None:
    ok = [r for r in results if r["result"].get("latency", {}).get("latencies_ms")]
    if not ok:
        return
    fig, ax = new_figure()
    for r in ok:
        lat = r["result"]["latency"]["latencies_ms"]
        ax.plot(lat, [(i + 1) / len(lat) for i in range(len(lat))], label=r["mode"])
    ax.set_xscale("log")
    ax.set_xlabel("input to output arrival (ms, log scale)")
    ax.set_ylabel("fraction of records")
    ax.set_title("Kinesis to Kinesis latency: real-time mode and micro-batches", fontsize=9)
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    save_figure(fig, "realtime-bench")
    timeline(ok)


def timeline(results: list) -> None:
    """Each record's latency against when it was put, real-time batch ends marked: where the pauses fall."""
    timed = [r for r in results if r["result"]["latency"].get("series")]
    if not timed:
        return
    fig, ax = new_figure()
    t0 = min(r["result"]["latency"]["series"][0][0] for r in timed)
    for r in timed:
        series = r["result"]["latency"]["series"]
        ax.plot([(t - t0) / 1000 for t, _ in series], [x for _, x in series], ".", markersize=2, label=r["mode"])
        if r["mode"] == "real-time":
            ends = [(e - t0) / 1000 for e in batch_ends(r["result"]["latency"])]
            for i, x in enumerate(x for x in ends if x >= 0):
                ax.axvline(x, color="tab:red", alpha=0.4, linewidth=1, label="real-time batch end" if i == 0 else None)
    ax.set_yscale("log")
    ax.set_xlabel("seconds into the latency phase (record put)")
    ax.set_ylabel("input to output arrival (ms, log scale)")
    ax.set_title("Latency over time, with real-time batch ends", fontsize=9)
    ax.legend(fontsize=8, markerscale=4)
    save_figure(fig, "realtime-batch-ends")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    phase_arguments(parser, "realtime-bench", records=20_000)
    parser.add_argument("--server", default=local_kinesis.KINESALITE,
                        choices=[local_kinesis.KINESALITE, local_kinesis.KINESIS_MOCK])
    parser.add_argument("--seconds", type=int, default=30, help="length of the latency phase")
    parser.add_argument("--fetch-period", default="50ms", help="minFetchPeriod in real-time mode")
    parser.add_argument("--record-delay", default="5ms", help="the sink's maxRecordDelay in real-time mode")
    parser.add_argument("--batch-duration", default="5 minutes", help="real-time batch duration")
    parser.add_argument("--progress-tracking", default="sync", choices=["sync", "async"],
                        help="real-time mode: Spark's progress tracking, off (sync) or on for the Kinesis sink (async)")
    parser.add_argument("--modes", default=",".join(MODES), help="which of the modes to run, comma-separated")
    args = parser.parse_args()
    if replot_or_child(args, "realtime-bench", plot, child):
        return
    results = []
    with local_server(args.server) as (server, kinesis):
        for mode in args.modes.split(","):
            results.append({"mode": mode, "result": run_one(server, kinesis, args, mode)})
    summary = {"versions": versions(args.server), "records": args.records, "size": args.size,
               "shards": args.shards, "rate": args.rate, "seconds": args.seconds,
               "fetch_period": args.fetch_period, "record_delay": args.record_delay,
               "batch_duration": args.batch_duration, "progress_tracking": args.progress_tracking, "runs": results}
    finish("realtime-bench", summary, table(results), plot if args.plot else None)


if __name__ == "__main__":
    main()
