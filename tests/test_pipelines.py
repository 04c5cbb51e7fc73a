"""Spark declarative pipelines (Spark 4.1+): examples/pipelines/kinesis_orders run by `spark-pipelines run`.

The example's SQL reads a Kinesis stream through the connector's catalog (`STREAM kinesis.orders`) into a streaming
table, and a materialized view counts its records per partition key. Here it runs against kinesalite, as a user
runs it: a copy of the example whose spec adds the catalog's connection settings and a storage folder of its own,
and whose SQL names the test's stream. `spark-pipelines` starts a local Spark Connect server; it gets the connector
jar and its static settings from a spark-defaults.conf (see ``_run_pipeline`` for why not `--jars` and `--conf`).
The tables live in a Hive metastore (Derby) of the run's folder, so that a second run finds them: Spark's
in-memory catalog would forget them when the first run ends.

The tables are read from the warehouse's Parquet files: the streaming table's committed files are the ones its
file-sink log (`_spark_metadata`) lists, as Spark reads them.
"""

from __future__ import annotations

import collections
import json
import os
import shutil
import signal
import subprocess
import sys
import uuid
from pathlib import Path
from urllib.parse import unquote, urlparse

import pyspark
import pytest

import spark_kinesis
from conftest import connector_options, pyspark_line
from harness import streams

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "pipelines" / "kinesis_orders"
STREAM_IN_SQL = "STREAM kinesis.orders"
RUN_TIMEOUT = 1200  # seconds one `spark-pipelines run` may take: two JVM starts and a Hive metastore on 2 cores, 1 to 2
# minutes on a quiet machine; over 10 on a CI machine whose other lanes kept both cores busy (2026-11-29)
FIRST, SECOND = 150, 90  # records written before the first and before the second run
KEYS = 6


def _pipeline(workdir: Path, server, stream: str) -> Path:
    """A copy of the example under ``workdir``: the SQL reads ``stream``, the spec has a storage folder of its own
    and the settings that reach the local server. Returns the spec's path."""
    import yaml

    project = workdir / "kinesis_orders"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns("README.md"))
    raw = project / "transformations" / "orders_raw.sql"
    sql = raw.read_text(encoding="utf-8")
    assert sql.count(STREAM_IN_SQL) == 1, f"{raw.name} should read the stream as `{STREAM_IN_SQL}`"
    raw.write_text(sql.replace(STREAM_IN_SQL, f"STREAM kinesis.{stream}"), encoding="utf-8")
    spec_path = project / "spark-pipeline.yml"
    spec = yaml.safe_load(spec_path.read_text(encoding="utf-8"))
    assert spec["configuration"]["spark.sql.catalog.kinesis"] == "io.sparkkinesis.KinesisCatalog"
    spec["storage"] = (workdir / "pipeline-storage").as_uri()
    spec["configuration"].update(
        {f"spark.sql.catalog.kinesis.{name}": value for name, value in connector_options(server).items()})
    spec_path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return spec_path


def _run_pipeline(spec: Path, workdir: Path, log: Path) -> str:
    """Runs `spark-pipelines run` in ``workdir`` and returns its output; fails with its end if it does not succeed.

    The jar and the static settings are in a spark-defaults.conf (SPARK_CONF_DIR), not on the command line:
    spark-pipelines passes its settings on to the Python process, which starts the Connect server in a second JVM,
    in groups of ten, and PySpark 4.1 to 4.3 keep only the last group; with more than ten in all (spark-submit adds
    six to eight of its own) any of them may be lost, spark.jars included. The second JVM reads spark-defaults.conf
    itself. The catalog's settings are SQL settings, in the spec's `configuration`, which always arrives.
    SPARK_TESTING makes the Connect server listen on a free port instead of 15002, as in PySpark's own suites, so
    that the run neither takes the port from nor meets the local Connect servers of other tests (test_connect.py).
    """
    spark_home = os.path.dirname(pyspark.__file__)  # the venv's own Spark, whatever SPARK_HOME says
    conf_dir = workdir / "spark-conf"
    conf_dir.mkdir(exist_ok=True)
    settings = {
        "spark.jars": spark_kinesis.jar_path(),
        "spark.connect.grpc.binding.address": "127.0.0.1",
        "spark.sql.catalogImplementation": "hive",  # tables that outlive the run, in ./metastore_db
        "spark.ui.enabled": "false",
        "spark.sql.shuffle.partitions": "2",
    }
    (conf_dir / "spark-defaults.conf").write_text("".join(f"{k} {v}\n" for k, v in settings.items()),
                                                 encoding="utf-8")
    command = [os.path.join(spark_home, "bin", "spark-pipelines"), "run", "--spec", str(spec)]
    env = dict(os.environ, SPARK_HOME=spark_home, SPARK_CONF_DIR=str(conf_dir), PYSPARK_PYTHON=sys.executable,
               SPARK_LOCAL_IP="127.0.0.1", SPARK_TESTING="1")
    with open(log, "wb") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, cwd=str(workdir), env=env,
                                start_new_session=True)
        try:
            code = proc.wait(RUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # both JVMs and the pipeline's Python process
            proc.wait(30)
            code = None
    text = log.read_text(errors="replace")
    assert code is not None, f"spark-pipelines run took over {RUN_TIMEOUT} s:\n{text[-6000:]}"
    assert code == 0 and "Run is COMPLETED" in text, f"spark-pipelines run exited with {code}:\n{text[-6000:]}"
    return text


def _committed_files(table: Path):
    """The data files of a file-sink table: those its log `_spark_metadata` lists, from the newest compaction on."""
    logs = {}
    for entry in (table / "_spark_metadata").iterdir():
        name = entry.name
        if not name.startswith(".") and name.split(".")[0].isdigit():
            logs[int(name.split(".")[0])] = entry
    latest_compact = max((n for n, p in logs.items() if p.name.endswith(".compact")), default=-1)
    files = {}
    for batch in sorted(n for n in logs if n >= latest_compact):
        for line in logs[batch].read_text(encoding="utf-8").splitlines()[1:]:  # the first line is the version
            entry = json.loads(line)
            if entry["action"] == "add":
                files[entry["path"]] = True
            else:
                files.pop(entry["path"], None)
    return [Path(unquote(urlparse(p).path)) for p in files]


def _streaming_table(workdir: Path):
    import pyarrow.parquet as pq

    rows = []
    for path in _committed_files(workdir / "spark-warehouse" / "orders_raw"):
        rows.extend(pq.read_table(path).to_pylist())
    return rows


def _materialized_view(workdir: Path):
    import pyarrow.parquet as pq

    return pq.read_table(workdir / "spark-warehouse" / "orders_by_key").to_pylist()


def _write(kinesis, stream: str, first: int, count: int):
    """Writes orders ``first`` .. ``first + count - 1``; returns (payload, key, shard, sequence number) of each."""
    records = [(json.dumps({"order": i, "amount": i % 97}), f"customer-{i % KEYS}")
               for i in range(first, first + count)]
    placed = streams.put_records(kinesis, stream, records)
    return [(data, key, p["ShardId"], p["SequenceNumber"]) for (data, key), p in zip(records, placed)]


def _check(workdir: Path, written) -> None:
    raw = _streaming_table(workdir)
    # Every record once, with the shard and sequence number Kinesis gave it, its payload decoded.
    assert sorted((r["payload"], r["partitionKey"], r["shardId"], r["sequenceNumber"]) for r in raw) == sorted(written)
    assert all(r["arrivalTime"] is not None for r in raw)
    view = _materialized_view(workdir)
    assert {r["partitionKey"]: r["records"] for r in view} == dict(collections.Counter(key for _, key, _, _ in written))
    assert all(r["firstArrival"] <= r["lastArrival"] for r in view)


@pytest.mark.compat
@pytest.mark.heavy  # two spark-pipelines runs, each two JVMs (a launcher, the Connect server) and a Hive metastore
@pytest.mark.skipif(pyspark_line() < (4, 1),
                    reason=f"Spark declarative pipelines (spark-pipelines) came with Spark 4.1; this is PySpark "
                           f"{pyspark.__version__}")
def test_the_example_pipeline_reads_each_record_once_across_runs(kinesalite_server, tmp_path):
    try:
        import yaml  # noqa: F401
    except ImportError:
        pytest.fail("spark-pipelines needs PyYAML, which this environment lacks (pip install pyyaml)")

    kinesis = streams.client(kinesalite_server)
    stream = f"pipeline_orders_{uuid.uuid4().hex[:8]}"
    streams.create_stream(kinesis, stream, 2)
    spec = _pipeline(tmp_path, kinesalite_server, stream)

    written = _write(kinesis, stream, 0, FIRST)
    _run_pipeline(spec, tmp_path, tmp_path / "run-1.log")
    _check(tmp_path, written)

    # A second run appends only the records that arrived since the first, and the view counts them all.
    written += _write(kinesis, stream, FIRST, SECOND)
    _run_pipeline(spec, tmp_path, tmp_path / "run-2.log")
    _check(tmp_path, written)
