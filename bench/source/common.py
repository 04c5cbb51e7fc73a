"""What the source benchmarks share (bench/source/run.py and idle.py): the Spark session, the local kinesalite
server with a client for it, the connector's options against it, the foreachBatch that notes when each record
arrived, and where the results go. Not a test: nothing here asserts."""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import tempfile
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterator

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from harness import local_kinesis, streams  # noqa: E402

# Static keys the local server accepts; kinesalite wants CBOR off (docs/testing.md).
OPTIONS = {"region": "us-east-1", "awsAccessKeyId": "bench", "awsSecretKey": "bench", "cborEnabled": "false"}


def spark_session(app: str, conf: dict[str, str] | None = None, jars: str | None = None):
    """A local[2] session on loopback with the connector's jar, no UI, 2 GiB of driver memory, logs at ERROR;
    `conf`: more settings; `jars`: these jars instead of the connector's (another connector, side by side)."""
    os.environ.setdefault("AWS_EC2_METADATA_DISABLED", "true")
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    from spark_kinesis import configure_spark_with_kinesis

    builder = (SparkSession.builder.master("local[2]").appName(app).config("spark.ui.enabled", "false")
               .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.driver.memory", "2g"))
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    if os.environ.get("BENCH_DRIVER_JAVA_OPTIONS"):
        builder = builder.config("spark.driver.extraJavaOptions", os.environ["BENCH_DRIVER_JAVA_OPTIONS"])
    spark = (builder.config("spark.jars", jars) if jars else configure_spark_with_kinesis(builder)).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


@contextlib.contextmanager
def kinesalite() -> Iterator[tuple[Any, Any]]:
    """kinesalite on 127.0.0.1 (stopped by its PID on exit) and a boto3 client for it."""
    with local_server(local_kinesis.KINESALITE) as pair:
        yield pair


@contextlib.contextmanager
def local_server(kind: str) -> Iterator[tuple[Any, Any]]:
    """The local server `kind` (local_kinesis.KINESALITE or KINESIS_MOCK) on 127.0.0.1, stopped by its PID on
    exit, and a boto3 client for it."""
    with local_kinesis.start(kind) as server:
        yield server, streams.client(server)


def read_stream(spark, stream: str, endpoint: str, **options: str):
    """The connector's streaming read of `stream` from its trim horizon, at `endpoint`, with `options` besides."""
    return (spark.readStream.format("kinesis")
            .options(streamName=stream, endpointUrl=endpoint, initialPosition="trim_horizon", **OPTIONS, **options)
            .load())


def available_now(df, timeout: float, what: str) -> tuple[float, float, list[dict]]:
    """Runs `df` with `Trigger.AvailableNow` into the `noop` sink on a checkpoint of its own: when `start()` was
    called (epoch ms), the seconds from there to the query's end, and the progress of its batches; exits naming `what`
    when it does not end within `timeout` seconds."""
    with tempfile.TemporaryDirectory() as checkpoint:
        started, started_ms = time.monotonic(), time.time() * 1000
        query = df.writeStream.format("noop").option("checkpointLocation", checkpoint).trigger(availableNow=True).start()
        query.awaitTermination(timeout)
        seconds = time.monotonic() - started
        progress = [json.loads(p.json) for p in query.recentProgress]
        if query.isActive:
            query.stop()
            raise SystemExit(f"{what}: the query did not end within {timeout} s")
    return started_ms, seconds, progress


def drain(spark, endpoint: str, stream: str, records: int, **options: str) -> float:
    """Records per second of a `Trigger.AvailableNow` read of `stream` (with `options`) into the `noop` sink, timed
    from `start()` to termination; it must read exactly `records` rows."""
    _, seconds, progress = available_now(read_stream(spark, stream, endpoint, **options), 900, "the connector")
    read = sum(p["numInputRows"] for p in progress)
    if read != records:
        raise RuntimeError(f"the connector read {read} of {records} records (options {options})")
    return records / seconds


def arrival_recorder(arrived: dict) -> Callable[[Any, int], None]:
    """A foreachBatch function that notes, for each record's data, the time its batch reached foreachBatch."""
    def on_batch(batch, _batch_id: int) -> None:
        now = time.time()
        for row in batch.selectExpr("CAST(data AS STRING) AS id").collect():
            arrived.setdefault(row.id, now)
    return on_batch


def write_results(name: str, results: dict) -> Path:
    """Writes `results` to build/<name>.json and returns the path."""
    out = ROOT / "build" / f"{name}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=2))
    return out


def new_figure():
    """A matplotlib figure and axes of the benchmarks' size, drawn without a display."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(6, 3.5))


def save_figure(fig, name: str) -> Path:
    """Saves `fig` as docs/img/<name>.png and says so."""
    fig.tight_layout()
    target = ROOT / "docs" / "img" / f"{name}.png"
    target.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(target, dpi=120)
    print(f"wrote {target}")
    return target


def phase_arguments(parser: argparse.ArgumentParser, name: str, records: int) -> None:
    """The options of a benchmark with a throughput and a latency phase, run in child processes (bench/efo and
    bench/realtime): its data, its rate, its time limit, and its plot docs/img/<name>.png."""
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--records", type=int, default=records, help="records of the throughput phase")
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--rate", type=int, default=200, help="records/s in the latency phase")
    parser.add_argument("--timeout", type=int, default=300, help="seconds a throughput or latency phase may take")
    parser.add_argument("--plot", action="store_true", help=f"write docs/img/{name}.png")
    parser.add_argument("--replot", action="store_true", help=f"only draw the plot again from build/{name}.json")


def replot_or_child(args: argparse.Namespace, name: str, plot: Callable[[list], None],
                    child: Callable[[dict], None]) -> bool:
    """Does what --replot or --child asks, if either; False when the benchmark is to run."""
    if args.replot:
        plot(json.loads((ROOT / "build" / f"{name}.json").read_text())["runs"])
        return True
    if args.child:
        child(json.loads(args.child))
        return True
    return False


def in_fresh_process(script: str, spec: dict, timeout: float) -> dict:
    """Runs `script --child <spec>` in a Python process of its own (a fresh JVM for a query) and returns the last JSON
    line it printed; exits with the end of its output when it failed or printed none."""
    out = subprocess.run([sys.executable, script, "--child", json.dumps(spec)], capture_output=True, text=True,
                         timeout=timeout)
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    if out.returncode != 0 or not lines:
        raise SystemExit(f"{spec['kind']} failed ({out.returncode}):\n{out.stdout[-2000:]}\n{out.stderr[-4000:]}")
    return json.loads(lines[-1])


def run_child(script: str, cfg: dict, timeout: float) -> dict:
    """Runs `script --child <cfg>` in a Python process of its own and returns the JSON it wrote to the file
    cfg["out"] names (set here), or {"error": ...} with the end of its standard error."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as out:
        pass
    cfg = dict(cfg, out=out.name)
    proc = subprocess.run([sys.executable, script, "--child", json.dumps(cfg)], capture_output=True, text=True,
                          timeout=timeout)
    result = json.loads(Path(out.name).read_text()) if Path(out.name).stat().st_size else {}
    if proc.returncode != 0 or not result:
        result = {"error": f"exit {proc.returncode}: " + proc.stderr[-3000:]}
    return result


def finish(name: str, summary: dict, table: str, plot: Callable[[list], None] | None) -> None:
    """Prints the versions and the results table, writes build/<name>.json, and draws the plot when asked."""
    print(json.dumps(summary["versions"]))
    print(table)
    print(f"wrote {write_results(name, summary)}")
    if plot is not None:
        plot(summary["runs"])


def write_at_rate(put: Callable[[int, int], None], rate: int, seconds: float, tick: float = 0.1) -> int:
    """Calls put(first, count) every `tick` seconds for `seconds`, `rate` records per second in all (the records
    first .. first+count-1 of the run); returns how many records it put."""
    per_tick = max(1, round(rate * tick))
    written = 0
    end = time.monotonic() + seconds
    next_at = time.monotonic()
    while time.monotonic() < end:
        put(written, per_tick)
        written += per_tick
        next_at += tick
        time.sleep(max(0.0, next_at - time.monotonic()))
    return written


def results_table(results: list, labels: list[str], columns: list[tuple[str, str, str]]) -> str:
    """A Markdown table of child results: the `labels` keys of each run, then one column per (header, phase, key)
    of its result; a failed run or phase shows its error instead."""
    lines = ["| " + " | ".join(labels + [c[0] for c in columns]) + " |", "|" + "---|" * (len(labels) + len(columns))]
    for r in results:
        names = [str(r[k]) for k in labels]
        if "error" in r["result"]:
            cells = [f"failed: {r['result']['error'][:200]}"] + [""] * (len(columns) - 1)
        else:
            cells = []
            for _, phase, key in columns:
                part = r["result"].get(phase, {})
                cells.append(str(part.get(key, part.get("error", "")[:120])))
        lines.append("| " + " | ".join(names + cells) + " |")
    return "\n".join(lines)
