"""What the source benchmarks share (bench/source/run.py and idle.py): the Spark session, the local kinesalite
server with a client for it, the connector's options against it, the foreachBatch that notes when each record
arrived, and where the results go. Not a test: nothing here asserts."""

from __future__ import annotations

import contextlib
import json
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


def read_stream(spark, stream: str, endpoint: str):
    """The connector's streaming read of `stream` from its trim horizon, at `endpoint`."""
    return (spark.readStream.format("kinesis")
            .options(streamName=stream, endpointUrl=endpoint, initialPosition="trim_horizon", **OPTIONS).load())


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
