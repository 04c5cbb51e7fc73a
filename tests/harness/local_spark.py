"""A local Spark session with the connector's jar, listening on loopback only: for driver scripts run as subprocesses."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Mapping


def local_session(app_name: str, master: str = "local[2]", conf: Mapping[str, object] = ()):
    """Start (or get) a SparkSession for tests: UI off, driver on 127.0.0.1, two shuffle partitions, `conf` on top,
    and the connector's jar (the installed wheel's, or ``SPARK_KINESIS_JAR`` when set)."""
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("AWS_EC2_METADATA_DISABLED", "true")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

    from pyspark.sql import SparkSession

    from spark_kinesis import configure_spark_with_kinesis

    builder = (
        SparkSession.builder.master(master)
        .appName(app_name)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", "2")
    )
    for key, value in dict(conf).items():
        builder = builder.config(key, str(value))
    # SPARK_KINESIS_JAR: a connector jar of your own (a worktree's `bin/sbt connector/assembly`) instead of the
    # installed wheel's, for trying a Scala change in driver scripts without reinstalling the wheel.
    own_jar = os.environ.get("SPARK_KINESIS_JAR")
    spark = (builder.config("spark.jars", own_jar) if own_jar else configure_spark_with_kinesis(builder)).getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    return spark


def run_script(main, usage: str) -> None:
    """The command line of a driver script: one argument (its JSON config file); exits with `main`'s code."""
    if len(sys.argv) != 2:
        print(usage, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))


def write_atomically(path, text: str) -> None:
    """Writes a file under a temporary name and renames it, so a reader never sees it half written."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def await_query(query, seconds: float, who: str, timeout_code: int = 1, stop_file=None):
    """Waits for a driver script's streaming query, then stops it if it still runs.

    Returns (exit code, progress as dicts): 0 when it ended cleanly or was stopped because ``stop_file`` (a path,
    looked at every 0.2 s) appeared, 1 when it failed, ``timeout_code`` when it was still running after
    ``seconds``. The reason is printed to stderr, prefixed by ``who``."""
    import json
    import time

    code = 0
    deadline = time.monotonic() + seconds
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                print(f"{who}: the query was still running after {seconds:.0f} s; stopping it", file=sys.stderr)
                code = timeout_code
                break
            # Spark takes whole, positive milliseconds.
            if query.awaitTermination(max(0.001, remaining if stop_file is None else min(remaining, 0.2))):
                if query.exception() is not None:
                    print(f"{who}: the query failed: {query.exception()}", file=sys.stderr)
                    code = 1
                break
            if stop_file is not None and os.path.exists(stop_file):
                break  # stopped below
    except Exception as e:  # awaitTermination raises the query's failure
        print(f"{who}: the query failed: {e}", file=sys.stderr)
        code = 1
    finally:
        # PySpark 4 gives StreamingQueryProgress objects (with .json; in 4.0 a dict holding UUID objects);
        # PySpark 3.5 gives plain dicts of JSON values.
        progress = [json.loads(p.json) if hasattr(p, "json") else p for p in query.recentProgress]
        if query.isActive:
            query.stop()
    return code, progress


def parsed_test_records(raw):
    """The test writers' JSON records ({"id", "key", "seq"}) of a connector DataFrame, with the position columns."""
    from pyspark.sql import functions as F

    text = F.col("data").cast("string")
    return raw.select(
        F.get_json_object(text, "$.id").cast("long").alias("id"),
        F.get_json_object(text, "$.key").alias("key"),
        F.get_json_object(text, "$.seq").cast("long").alias("seq"),
        "partitionKey", "shardId", "sequenceNumber", "subSequenceNumber",
    )
