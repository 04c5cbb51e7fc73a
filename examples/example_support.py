"""What the example pipelines in this folder share: command-line options, the Spark session, progress lines.

Copy this file along with the example you start from; it needs only PySpark and spark-kinesis.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Dict, Iterable, Mapping, Optional, Set, Tuple

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.streaming.query import StreamingQuery
    from pyspark.sql.streaming.listener import StreamingQueryProgress
    from pyspark.sql.streaming.readwriter import DataStreamWriter

__all__ = ["make_parser", "parse_options", "spark_session", "with_trigger", "with_real_time_trigger", "run_query"]


def make_parser(doc: str, output_help: str) -> argparse.ArgumentParser:
    """The options every example takes (each example adds its own); `doc` is the example's docstring."""
    description, _, epilog = doc.strip().partition("\n\n")
    parser = argparse.ArgumentParser(description=description, epilog=epilog,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stream", required=True,
                        help="the stream to read: a name or a stream ARN (several: comma-separated)")
    parser.add_argument("--region",
                        help="AWS region of the stream (default: from the ARN, else AWS_REGION or the AWS profile)")
    parser.add_argument("--endpoint-url",
                        help="a Kinesis endpoint to use instead of the region's: a VPC endpoint, or a local "
                             "server such as http://127.0.0.1:4566")
    parser.add_argument("--checkpoint", required=True,
                        help="the query's checkpoint folder (any Hadoop path); run again with the same folder "
                             "to continue where the query stopped")
    parser.add_argument("--output", required=True, help=output_help)
    parser.add_argument("--initial-position", default="trim_horizon", choices=["trim_horizon", "latest"],
                        help="where a new query starts in each shard (default: trim_horizon, the oldest "
                             "record kept); ignored when the checkpoint already has a position")
    parser.add_argument("--available-now", action="store_true",
                        help="read the records in the stream when the query starts, in batches, then stop "
                             "(Trigger.AvailableNow); without it the query runs until interrupted (Ctrl-C)")
    parser.add_argument("--trigger-interval", default="5 seconds",
                        help="time between micro-batches when running continuously (default: 5 seconds)")
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                        help="any other option of the Kinesis source (docs/options.md), e.g. "
                             "maxRecordsPerTrigger=50000 or cborEnabled=false; repeat for several")
    return parser


def parse_options(pairs: Iterable[str], parser: argparse.ArgumentParser) -> Dict[str, str]:
    """``["name=value", ...]`` as a dict; a pair without ``=`` is a usage error."""
    options: Dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            parser.error(f"--option takes NAME=VALUE, got {pair!r}")
        options[name.strip()] = value.strip()
    return options


def spark_session(app_name: str, conf: Optional[Mapping[str, str]] = None) -> SparkSession:
    """A session with the connector's jar (from the installed spark-kinesis wheel) on its classpath.

    The master comes from spark-submit, or local[*] when the script is run with plain ``python``.
    """
    from pyspark.sql import SparkSession

    from spark_kinesis import configure_spark_with_kinesis

    # The examples print a line per micro-batch; Spark's console progress bar would only interleave with it.
    builder = SparkSession.builder.appName(app_name).config("spark.ui.showConsoleProgress", "false")
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    spark = configure_spark_with_kinesis(builder).getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    return spark


def with_trigger(writer: DataStreamWriter, args: argparse.Namespace) -> DataStreamWriter:
    """``writer`` with the trigger of ``--available-now`` or ``--trigger-interval``."""
    if args.available_now:
        return writer.trigger(availableNow=True)
    return writer.trigger(processingTime=args.trigger_interval)


def with_real_time_trigger(writer: DataStreamWriter, duration: str) -> DataStreamWriter:
    """``writer.trigger(realTime=duration)``, on every Spark line that has real-time mode.

    PySpark takes ``realTime`` from 4.2 on. Spark 4.1 has the mode, but its Python API does not yet: there the
    trigger is set on the JVM's writer (classic PySpark, not Spark Connect). Spark 4.0 and 3.5 have no real-time
    mode.
    """
    import inspect

    import pyspark

    if "realTime" in inspect.signature(type(writer).trigger).parameters:
        return writer.trigger(realTime=duration)  # type: ignore[call-overload, no-any-return]
    if not pyspark.__version__.startswith("4.1.") or not hasattr(writer, "_jwrite"):
        raise SystemExit(f"real-time mode needs Spark 4.1 or later with classic PySpark; this is PySpark "
                         f"{pyspark.__version__}")
    jvm = writer._spark.sparkContext._jvm
    assert jvm is not None
    writer._jwrite = writer._jwrite.trigger(jvm.org.apache.spark.sql.streaming.Trigger.RealTime(duration))
    return writer


def _number(value: object) -> float:
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 0.0


def progress_line(name: str, progress: StreamingQueryProgress) -> str:
    """One line for one micro-batch: records, time, and the source's lag and shard metrics."""
    sources = progress["sources"] or []
    metrics = (sources[0]["metrics"] if sources else None) or {}
    rows = int(progress["numInputRows"])
    seconds = _number((progress["durationMs"] or {}).get("triggerExecution")) / 1000.0
    rate = f" ({rows / seconds:,.0f}/s)" if rows and seconds > 0 else ""
    return (f"[{name}] batch {progress['batchId']}: {rows:,} records in {seconds:.1f} s{rate}; "
            f"behind latest: max {_number(metrics.get('maxMsBehindLatest')):,.0f} ms, "
            f"avg {_number(metrics.get('avgMsBehindLatest')):,.0f} ms; "
            f"buffered {_number(metrics.get('bufferedRecords')):,.0f} records; "
            f"shards open {metrics.get('openShards', '?')}, closed {metrics.get('closedShards', '?')}")


def run_query(query: StreamingQuery, name: str) -> int:
    """Print a progress line per micro-batch until the query ends; 0 when it ended well, 1 when it failed.

    With Trigger.AvailableNow the query ends by itself; otherwise Ctrl-C stops it (the checkpoint keeps its
    position, so the next run continues from there).
    """
    from spark_kinesis.errors import from_exception

    printed: Set[Tuple[object, object]] = set()
    totals = {"records": 0, "batches": 0}

    def print_new() -> None:
        for progress in query.recentProgress:
            key = (progress["batchId"], progress["timestamp"])
            if key not in printed:
                printed.add(key)
                totals["records"] += int(progress["numInputRows"])
                totals["batches"] += 1
                print(progress_line(name, progress), flush=True)

    try:
        while not query.awaitTermination(1):  # raises when the query failed
            print_new()
        print_new()
    except KeyboardInterrupt:
        print(f"[{name}] stopping; run again with the same --checkpoint to continue from here", flush=True)
        query.stop()
        return 0
    except Exception as error:  # noqa: BLE001 - reported, then the exit code says it failed
        print_new()
        known = from_exception(error)
        print(f"[{name}] the query failed: {known or error}", flush=True)
        return 1
    print(f"[{name}] done: {totals['records']:,} records in {totals['batches']} batch(es)", flush=True)
    return 0
