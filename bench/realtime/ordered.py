#!/usr/bin/env python3
"""An ordered change-data pipeline in real-time mode, Kinesis to Kinesis (issue 39; not part of CI).
Results and commands: docs/performance.md, "Ordered real-time pipelines".

The shape a change-data pipeline has: a 4-shard input stream written at --rate records/s over --keys keys (each
key's records numbered in order), the records of one key in five put as KPL aggregates of that key alone (made by
aws-kinesis-agg), read by the connector in real-time mode (--batch-duration batches, --slots task slots,
asynchronous progress tracking) and written unchanged to a 4-shard output stream by the connector's sink, once per
sink setting in --sinks:

* ``unordered``: the default; ``perKey``: ``ordering=perKey``; ``perKey+kpl``: ``ordering=perKey`` with
  ``aggregation=kpl`` (the output read as the KCL reads it: de-aggregated, sub-records outside their shard's
  range dropped).

Per setting, in a Spark process of its own: a warm-up record through the pipeline, then --seconds of writing. A
record's latency is its arrival in the output stream minus its arrival in the input stream, both
ApproximateArrivalTimestamps of the same server. Reported: p50, p99, max; the same over the first 5 seconds of
writing (the slow start); the records within a second of each batch end; and the order violations of each key
against its order in the input stream (both streams read parents first).

``--sources kinesis,spark`` adds, after each sink setting's run and in the same run of this script, the same
pipeline with Spark's own real-time test source (``LowLatencyMemoryStream``, --slots partitions, fed the same
records at the same rate from the driver) in the place of the Kinesis input: the baseline a batch end is judged
against (issue 39: the connector's source may add at most 100 ms to Spark's own pause). Its latency is the output
arrival minus the time the record was added, which the record carries.

    make bench-ordered
    .venv/bin/python bench/realtime/ordered.py [--server kinesis-mock] [--fetch efo] [--sinks perKey+kpl] [--plot]
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "source"))

from common import (local_server, new_figure, replot_or_child, run_child, finish, results_table,  # noqa: E402
                    save_figure, spark_session)
from harness import local_kinesis, ordering, streams  # noqa: E402

# bench/realtime/run.py's helpers (a plain `import run` would find bench/source/run.py first).
_spec = importlib.util.spec_from_file_location("realtime_run", Path(__file__).with_name("run.py"))
_run = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_run)
KEYS, batch_end_summary, batch_ends, iso_millis, versions = (
    _run.KEYS, _run.batch_end_summary, _run.batch_ends, _run.iso_millis, _run.versions)

NAME = "ordered-realtime"
SINKS = {"unordered": {}, "perKey": {"ordering": "perKey"},
         "perKey+kpl": {"ordering": "perKey", "aggregation": "kpl"}}
TICK_S = 0.1
FIRST_SECONDS = 5


# --------------------------------------------------------------------------------------------------------------
# The child: one sink setting in a Spark process of its own


class MemorySource:
    """Spark's own real-time test source (``LowLatencyMemoryStream``, in Spark's jar) through py4j: strings added
    on the driver, read by --slots partitions."""

    def __init__(self, spark, partitions: int):
        jvm = spark.sparkContext._jvm
        self._jvm = jvm
        self._stream = jvm.org.apache.spark.sql.execution.streaming.sources.LowLatencyMemoryStream.apply(
            spark._jsparkSession, partitions, jvm.org.apache.spark.sql.Encoders.STRING())
        from pyspark.sql import DataFrame
        self.frame = DataFrame(self._stream.toDF(), spark)

    def add(self, values: list) -> None:
        self._stream.addData(self._jvm.org.apache.spark.api.python.PythonUtils.toSeq(values))


def start_pipeline(spark, cfg: dict, checkpoint: str, memory=None):
    connection = dict(KEYS, endpointUrl=cfg["endpoint"], cborEnabled=cfg["cbor"])
    read = dict(connection, streamName=cfg["input"], initialPosition="trim_horizon",
                minFetchPeriod=cfg["fetch_period"], consumerMode=cfg["fetch"])
    write = dict(connection, streamName=cfg["output"], maxRecordDelay=cfg["record_delay"], **SINKS[cfg["sink"]])
    if memory is None:
        frame = spark.readStream.format("kinesis").options(**read).load().select("data", "partitionKey")
    else:  # `key:seq@addedMillis`, keyed by its key
        frame = memory.frame.selectExpr("CAST(value AS BINARY) AS data",
                                        "substring_index(value, ':', 1) AS partitionKey")
    return (frame.writeStream.format("kinesis").options(**write).option("checkpointLocation", checkpoint)
            .option("_asyncProgressTrackingOverrideSinkSupportCheck", "true")
            .outputMode("update").trigger(realTime=cfg["batch_duration"]).start())


def output_users(kinesis, stream: str) -> list:
    return ordering.read_as_kcl(kinesis, stream)[0]


def wait_for(query, done, timeout: float, every: float = 1.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if query.exception() is not None:
            raise RuntimeError(str(query.exception())[:2000])
        if done():
            return True
        time.sleep(every)
    return False


def write_ticks(kinesis, cfg: dict, memory=None) -> int:
    """Puts --rate records a second for --seconds, a tick's records in one PutRecords call (or, for Spark's
    source, one addData call of the same records' data and the time added); returns how many."""
    per_tick = max(1, round(cfg["rate"] * TICK_S))
    written = 0
    next_at = time.monotonic()
    end = next_at + cfg["seconds"]
    while time.monotonic() < end:
        if memory is None:
            streams.put_records(kinesis, cfg["input"], ordering.tick_entries(written, per_tick, cfg["keys"]))
        else:
            now = round(time.time() * 1000)
            memory.add([f"{ordering.key_name(n % cfg['keys'])}:{n // cfg['keys']:07d}@{now}"
                        for n in range(written, written + per_tick)])
        written += per_tick
        next_at += TICK_S
        time.sleep(max(0.0, next_at - time.monotonic()))
    return written


def child(cfg: dict) -> None:
    class Server:  # what streams.client needs of a server
        endpoint = cfg["endpoint"]
        cbor_enabled = cfg["cbor"] == "true"
    work = Path(tempfile.mkdtemp(prefix=f"{NAME}-"))
    (work / "events").mkdir()
    # The event log gives each task's launch and finish: where a batch end's pause goes (task_gaps).
    conf = {"spark.master": f"local[{cfg['slots']}]", "spark.sql.streaming.realTimeMode.allowlistCheck": "false",
            "spark.eventLog.enabled": "true", "spark.eventLog.dir": str(work / "events"),
            "spark.eventLog.compress": "false"}
    spark = spark_session(f"{NAME}-{cfg['sink']}-{cfg['source']}", conf=conf)
    kinesis = streams.client(Server())
    memory = MemorySource(spark, cfg["slots"]) if cfg["source"] == "spark" else None
    query = start_pipeline(spark, cfg, str(work / "checkpoint"), memory)
    result: dict = {}
    try:
        if memory is None:
            streams.put_records(kinesis, cfg["input"], [("warm-up", "warm-up")])
        else:
            memory.add([f"warm-up:0@{round(time.time() * 1000)}"])
        if not wait_for(query, lambda: len(output_users(kinesis, cfg["output"])) >= 1, 180, every=0.2):
            raise RuntimeError("the warm-up record did not come through in 180 s")
        written = write_ticks(kinesis, cfg, memory)
        if not wait_for(query, lambda: len({r["data"] for r in output_users(kinesis, cfg["output"])}) >= written + 1,
                        120, every=2):
            raise RuntimeError(f"not every one of {written} records came through in 120 s")
        result["written"] = written
        result["batches"] = [{"batchId": p["batchId"], "startMs": round(iso_millis(p["timestamp"])),
                              "durationMs": p["durationMs"]} for p in query.recentProgress]
    finally:
        query.stop()
    spark.stop()
    result["task_gaps"] = task_gaps(work / "events", cfg["batch_duration"])
    Path(cfg["out"]).write_text(json.dumps(result))


def task_gaps(events: Path, batch_duration: str) -> list:
    """Per real-time batch end, from the event log: how long after the batch's deadline (its first task's launch
    plus the batch duration) its last task finished (the readers' stop and the sink's last calls), and the gap from
    there to the next batch's first task launch (Spark's commit, the next plan, the scheduling)."""
    seconds = float(batch_duration.split()[0])
    stages: dict = {}
    for f in events.rglob("*"):
        if not f.is_file():
            continue
        for line in f.read_text(encoding="utf-8").splitlines():
            if '"SparkListenerTaskEnd"' not in line:
                continue
            e = json.loads(line)
            info = e["Task Info"]
            s = stages.setdefault(e["Stage ID"], [])
            s.append((info["Launch Time"], info["Finish Time"]))
    # Each real-time batch is one stage (the query runs nothing else); the last one was stopped early.
    batches = [v for _, v in sorted(stages.items())]
    out = []
    for this, after in zip(batches, batches[1:]):
        deadline = min(l for l, _ in this) + seconds * 1000
        last_end = max(f for _, f in this)
        out.append({"last_task_end": last_end, "next_first_launch": min(l for l, _ in after),
                    "tasks_end_after_deadline_ms": round(last_end - deadline),
                    "first_task_end_after_deadline_ms": round(min(f for _, f in this) - deadline),
                    "gap_to_next_batch_ms": round(min(l for l, _ in after) - last_end),
                    "next_tasks_launched_over_ms": round(max(l for l, _ in after) - min(l for l, _ in after))})
    return out


# --------------------------------------------------------------------------------------------------------------
# The parent: the server, the streams, one child per sink setting, the measures


def measure(kinesis, input_stream: str, output_stream: str, child_result: dict, source: str = "kinesis") -> dict:
    read_out, dropped = ordering.read_as_kcl(kinesis, output_stream)
    if source == "spark":  # no input stream: each record carries when it was added
        read_in = []
        written_at = {r["data"]: datetime.datetime.fromtimestamp(int(r["data"].rsplit("@", 1)[1]) / 1000,
                                                                  datetime.timezone.utc)
                      for r in read_out if r["partition_key"] != "warm-up"}
    else:
        read_in, _ = ordering.read_as_kcl(kinesis, input_stream)
        written_at = {r["data"]: r["arrival_timestamp"] for r in read_in if r["partition_key"] != "warm-up"}
    arrived = {}
    for r in read_out:
        arrived.setdefault(r["data"], r["arrival_timestamp"])
    series = sorted((t.timestamp() * 1000, (arrived[d] - t).total_seconds() * 1000)
                    for d, t in written_at.items() if d in arrived)
    lat = sorted(x for _, x in series)
    for gap in child_result.get("task_gaps", []):
        # Around the pause: the last record put that batch's tasks handed on, the first output after the next
        # batch's tasks launched, both relative to the last task's end.
        end, launch = gap["last_task_end"], gap["next_first_launch"]
        before = [t for t, x in series if t + x <= end + 50]  # a record's output arrival is its put plus its latency
        after = [t + x for t, x in series if t + x >= launch]
        gap["last_put_delivered_before_end_ms"] = round(max(before) - end) if before else None
        gap["first_output_after_launch_ms"] = round(min(after) - launch) if after else None
    start = series[0][0] if series else 0
    first = sorted(x for t, x in series if t - start < FIRST_SECONDS * 1000)
    if source == "spark":  # the baseline's measure is its latency; nothing to check its order against
        missing, broken = [None] * max(0, child_result["written"] - len(written_at)), []
    else:
        missing, broken = ordering.violations(
            ordering.by_key(r for r in read_in if r["partition_key"] != "warm-up"),
            ordering.by_key(r for r in read_out if r["partition_key"] != "warm-up"))

    def pct(xs, q):
        return round(xs[min(len(xs) - 1, int(len(xs) * q))]) if xs else None

    return {"task_gaps": child_result.get("task_gaps", []), "written": child_result["written"], "arrived": len(lat),
            "missing": len(missing), "order_violations": len(broken), "violations_sample": broken[:5], "dropped_sub_records": dropped,
            "p50_ms": pct(lat, 0.5), "p99_ms": pct(lat, 0.99), "max_ms": round(lat[-1]) if lat else None,
            "first_p99_ms": pct(first, 0.99), "first_max_ms": round(first[-1]) if first else None,
            "latencies_ms": [round(x, 1) for x in lat], "series": [[round(t), round(x, 1)] for t, x in series],
            "batches": child_result["batches"]}


def run_one(server, kinesis, args, sink: str, source: str) -> dict:
    tag = uuid.uuid4().hex[:6]
    names = {"input": f"ordered-in-{tag}", "output": f"ordered-out-{tag}"}
    for name in names.values():
        streams.create_stream(kinesis, name, args.shards)
    cfg = dict(names, sink=sink, source=source, endpoint=server.endpoint, cbor=str(server.cbor_enabled).lower(),
               keys=args.keys, rate=args.rate, seconds=args.seconds, fetch=args.fetch, fetch_period=args.fetch_period,
               record_delay=args.record_delay, batch_duration=args.batch_duration, slots=args.slots)
    started = time.monotonic()
    result = run_child(__file__, cfg, args.seconds + 900)
    if "error" not in result:
        result = {"latency": measure(kinesis, names["input"], names["output"], result, source)}
    shown = {k: ({x: y for x, y in v.items() if x not in ("latencies_ms", "series", "batches")}
                 if isinstance(v, dict) else v) for k, v in result.items()}
    label = sink if source == "kinesis" else f"{sink} from Spark's source"
    print(f"{label}: {json.dumps(shown)} ({time.monotonic() - started:.0f} s)", flush=True)
    for line in batch_end_summary(result.get("latency", {})):
        print(f"{label}: {line}", flush=True)
    for i, gap in enumerate(result.get("latency", {}).get("task_gaps", [])):
        print(f"{label}: end of batch {i}, tasks and Spark: {json.dumps(gap)}", flush=True)
    for name in names.values():
        streams.delete_stream(kinesis, name, missing_ok=True, with_consumers=True)
    return result


def batch_end_maxes(latency: dict) -> list:
    """Per batch end, the max latency of the records put within 1 s of it."""
    series = latency.get("series") or []
    return [max((x for t, x in series if abs(t - end) <= 1000), default=None) for end in batch_ends(latency)]


def beside_spark(results: list) -> list:
    """Per sink setting run from both sources: each batch end's max from the Kinesis source beside Spark's own
    source's, and the difference (what the connector's source adds to Spark's pause)."""
    lines = []
    for r in results:
        if r["source"] != "kinesis":
            continue
        base = next((b for b in results if b["source"] == "spark" and b["sink"] == r["sink"]), None)
        if base is None:
            continue
        ours = batch_end_maxes(r["result"].get("latency", {}))
        spark = batch_end_maxes(base["result"].get("latency", {}))
        for i, (a, b) in enumerate(zip(ours, spark)):
            if a is not None and b is not None:
                lines.append(f"{r['sink']}: end of batch {i}: max {a:.0f} ms from the Kinesis source, {b:.0f} ms "
                             f"from Spark's source: {a - b:+.0f} ms")
    return lines


def table(results: list) -> str:
    return results_table(results, ["sink", "source", "server", "fetch"], [
        ("p50 (ms)", "latency", "p50_ms"), ("p99 (ms)", "latency", "p99_ms"), ("max (ms)", "latency", "max_ms"),
        (f"first {FIRST_SECONDS} s p99", "latency", "first_p99_ms"), ("first max", "latency", "first_max_ms"),
        ("order violations", "latency", "order_violations"), ("missing", "latency", "missing")])


def plot(results: list) -> None:
    timed = [r for r in results if r["result"].get("latency", {}).get("series")]
    if not timed:
        return
    fig, ax = new_figure()
    for r in timed:
        series = r["result"]["latency"]["series"]
        t0 = series[0][0]
        ax.plot([(t - t0) / 1000 for t, _ in series], [x for _, x in series], ".", markersize=2,
                label=f"{r['sink']} ({r['server']}, {r['fetch']}"
                      + (", Spark's source)" if r.get("source") == "spark" else ")"))
        for i, end in enumerate(e for e in batch_ends(r["result"]["latency"]) if e >= t0):
            ax.axvline((end - t0) / 1000, color="tab:red", alpha=0.3, linewidth=1,
                       label="batch end" if r is timed[0] and i == 0 else None)
    ax.set_yscale("log")
    ax.set_xlabel("seconds into the writing (record put)")
    ax.set_ylabel("input to output arrival (ms, log scale)")
    ax.set_title("Ordered change-data pipeline in real-time mode: latency over time", fontsize=9)
    ax.legend(fontsize=7, markerscale=4)
    save_figure(fig, NAME)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--replot", action="store_true", help=f"only draw the plot again from build/{NAME}.json")
    parser.add_argument("--plot", action="store_true", help=f"write docs/img/{NAME}.png")
    parser.add_argument("--server", default=local_kinesis.KINESALITE,
                        choices=[local_kinesis.KINESALITE, local_kinesis.KINESIS_MOCK])
    parser.add_argument("--fetch", default="polling", choices=["polling", "efo"])
    parser.add_argument("--sinks", default=",".join(SINKS), help="sink settings to run, comma-separated")
    parser.add_argument("--sources", default="kinesis",
                        help="kinesis, and spark for Spark's own real-time test source as the baseline")
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--keys", type=int, default=40)
    parser.add_argument("--rate", type=int, default=600, help="records/s written while the query runs")
    parser.add_argument("--seconds", type=int, default=50, help="how long records are written")
    parser.add_argument("--slots", type=int, default=8, help="task slots (local[N])")
    parser.add_argument("--fetch-period", default="50ms", help="minFetchPeriod")
    parser.add_argument("--record-delay", default="10ms", help="the sink's maxRecordDelay")
    parser.add_argument("--batch-duration", default="20 seconds", help="real-time batch duration")
    args = parser.parse_args()
    if replot_or_child(args, NAME, plot, child):
        return
    results = []
    with local_server(args.server) as (server, kinesis):
        for sink in args.sinks.split(","):
            for source in args.sources.split(","):
                results.append({"sink": sink, "source": source, "server": args.server, "fetch": args.fetch,
                                "result": run_one(server, kinesis, args, sink, source)})
    for line in beside_spark(results):
        print(line, flush=True)
    summary = {"versions": versions(args.server), "keys": args.keys, "rate": args.rate, "seconds": args.seconds,
               "shards": args.shards, "slots": args.slots, "fetch_period": args.fetch_period,
               "record_delay": args.record_delay, "batch_duration": args.batch_duration, "runs": results}
    finish(NAME, summary, table(results), plot if args.plot else None)


if __name__ == "__main__":
    main()
