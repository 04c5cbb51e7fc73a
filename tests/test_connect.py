"""Spark Connect: kinesis_stream, read_kinesis and write_kinesis, the SQL forms of docs/sql.md (a Kinesis
catalog's tables, CREATE TABLE and INSERT INTO, the read_kinesis function), and the schema registry functions
(docs/schema-registry.md, against moto's Glue) work from a Connect session.

The Connect client runs in a subprocess (tests/drivers/connect_app.py): a local Connect server lives in a JVM that the
client's Python process starts itself, which PySpark refuses next to the classic session of this process.
Two servers are covered: the local one PySpark starts for ``remote("local[2]")``, given the jar by
``configure_spark_with_kinesis``, and a separate server started with ``spark-submit --jars <jar>``, as a
Spark Connect deployment is.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

import spark_kinesis
from conftest import connector_options
from harness import moto, streams
from harness.streaming import DRIVERS_DIR
from harness.waiting import wait_for

APP = DRIVERS_DIR / "connect_app.py"
LOCAL_CONNECT_PORT = 15002  # PySpark's local Connect server always listens here
ROWS = 60
QUERY_TIMEOUT = 240  # a bound for a hang, not a speed: CI machines have been 2-3 times slower than ours


def _port_in_use(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _streams(server):
    kinesis = streams.client(server)
    suffix = uuid.uuid4().hex[:8]
    source, copy = f"connect-source-{suffix}", f"connect-copy-{suffix}"
    streams.create_stream(kinesis, source, 2)
    streams.create_stream(kinesis, copy, 1)
    return kinesis, source, copy


ORDER = {"type": "record", "name": "Order", "namespace": "shop",
         "fields": [{"name": "id", "type": "long"}, {"name": "customer", "type": "string"}]}


@pytest.fixture(scope="module")
def glue(tmp_path_factory):
    """moto's Glue on loopback, with a registry of this module's own."""
    import boto3

    with moto.running(Path(tmp_path_factory.mktemp("moto-glue"))) as endpoint:
        boto3.client("glue", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="local-test-key",
                     aws_secret_access_key="local-test-secret").create_registry(RegistryName="connect")
        yield endpoint


def _registry(glue: str, server) -> dict:
    """The app's ``registry`` config: a schema it registers (autoRegistration) and a stream for the round trip."""
    stream = f"connect-typed-{uuid.uuid4().hex[:8]}"
    streams.create_stream(streams.client(server), stream, 1)
    return {"registryEndpointUrl": glue, "region": "us-east-1", "awsAccessKeyId": "local-test-key",
            "awsSecretKey": "local-test-secret", "registryName": "connect",
            "schemaName": f"orders-{uuid.uuid4().hex[:8]}", "autoRegistration": "true",
            "definition": json.dumps(ORDER), "stream": stream}


def _run_app(remote: str, server, source: str, copy: str, workdir: Path, env=None, errors_only=False,
             registry=None) -> dict:
    config = {"remote": remote, "connection": connector_options(server), "source": source, "copy": copy,
              "rows": ROWS, "workdir": str(workdir), "timeout": QUERY_TIMEOUT, "errors_only": errors_only,
              "registry": registry}
    proc = subprocess.run([sys.executable, str(APP), json.dumps(config)], capture_output=True, text=True,
                          timeout=4 * QUERY_TIMEOUT, env=env, cwd=str(workdir))
    assert proc.returncode == 0, f"connect_app.py failed:\n{proc.stderr[-6000:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _check(result: dict, kinesis, source: str, copy: str) -> None:
    written = sorted([f"key-{i % 7}", f"record-{i}"] for i in range(ROWS))
    assert result["session"].startswith("pyspark.sql.connect"), result["session"]
    assert result["batch_write_returned"] == "None"
    # Every row written by the batch write was read once by the streaming read.
    assert result["read_finished"], "the AvailableNow read did not end"
    assert sorted(result["read"]) == written
    # The streaming write copied every record once; read back with boto3.
    assert result["writer"] == "pyspark.sql.connect.streaming.readwriter.DataStreamWriter"
    assert result["copy_finished"], "the AvailableNow copy did not end"
    copied = sorted([r["partition_key"], r["data"].decode()] for r in streams.read_all(kinesis, copy))
    assert copied == written
    # Every SQL form read every row written, once: the catalog's table, a stream created and filled in SQL, and
    # read_kinesis; and DESCRIBE named the stream without its secret key.
    sql = result["sql"]
    assert sql["stream_finished"], "the AvailableNow read of the catalog's table did not end"
    for form in ("select", "stream", "insert", "read_kinesis", "session_table"):
        assert sorted(sql[form]) == written, form
    assert sql["describe_names_stream"] and not sql["describe_shows_secret"]
    # Typed payloads: what the sink wrote framed, the source read back and decoded, by Python and in SQL.
    if "registry" in result:
        typed = sorted([i, f"c{i % 7}"] for i in range(ROWS))
        assert sorted(result["registry"]["python"]) == typed
        assert sorted(result["registry"]["stream"]) == typed
        assert sorted(result["registry"]["sql"]) == typed
    # Errors arrive as the package's exception classes, from Python's checks and from the server.
    assert result["errors"] == {
        "misspelled_option": ["KinesisOptionError", "KINESIS_UNKNOWN_OPTION"],
        "extra_column": ["KinesisSchemaError", "KINESIS_INVALID_SINK_SCHEMA"],
        "missing_stream_batch": ["KinesisStreamNotFoundError", "KINESIS_STREAM_NOT_FOUND"],
        "missing_stream_query": ["KinesisStreamNotFoundError", "KINESIS_STREAM_NOT_FOUND"],
        "missing_stream_write": ["KinesisStreamNotFoundError", "KINESIS_STREAM_NOT_FOUND"],
    }
    _check_reported(result)


MISSING_STREAM_CALLS = ("missing_stream_batch", "missing_stream_query", "missing_stream_write")


def _check_reported(result: dict) -> None:
    """What the Spark Connect client itself reports of a missing stream, and the class chosen from that alone."""
    assert result["session"].startswith("pyspark.sql.connect"), result["session"]
    found = ["KinesisStreamNotFoundError", "KINESIS_STREAM_NOT_FOUND"]
    assert {call: result["errors"][call] for call in MISSING_STREAM_CALLS} == dict.fromkeys(MISSING_STREAM_CALLS, found)
    for call in MISSING_STREAM_CALLS:
        pyspark_class, condition, sql_state, by_condition = result["reported"][call]
        if result["pyspark"].startswith("3."):
            # PySpark 3.5's Connect client drops the server's condition: the package reads the message instead.
            assert (condition, by_condition) == (None, None), (call, result["reported"][call])
        else:
            assert (condition, sql_state) == ("KINESIS_STREAM_NOT_FOUND", "42704"), (call, pyspark_class)
            assert by_condition == "KinesisStreamNotFoundError", call


def _default_pyspark() -> str:
    """The PySpark version of the project's own virtual environment (python/requirements-dev.txt)."""
    pins = (Path(__file__).resolve().parents[1] / "python" / "requirements-dev.txt").read_text(encoding="utf-8")
    return re.search(r"^pyspark==(\S+)$", pins, re.M).group(1)


@pytest.mark.xdist_group("local-connect")  # PySpark's local Connect server always listens on the same port
def test_local_connect_server_gets_the_jar_from_configure(kinesalite_server, glue, tmp_path):
    assert not _port_in_use(LOCAL_CONNECT_PORT), (
        f"port {LOCAL_CONNECT_PORT} is taken: PySpark's local Spark Connect server always listens there")
    kinesis, source, copy = _streams(kinesalite_server)
    result = _run_app("local[2]", kinesalite_server, source, copy, tmp_path,
                      registry=_registry(glue, kinesalite_server))
    assert "registry" in result
    _check(result, kinesis, source, copy)


@pytest.mark.compat
@pytest.mark.heavy  # a Connect server JVM: `make test` runs it on 3.5; 4.x Connect is the default line's round trips
@pytest.mark.xdist_group("local-connect")
def test_errors_and_typed_payloads_from_a_connect_client(kinesalite_server, glue, tmp_path):
    """On every PySpark line, in one Connect session (one server JVM):

    - issue 28.5: PySpark 4's client reports the connector's condition and SQLSTATE of a missing stream, and the
      package picks its class by the condition alone; PySpark 3.5's client reports none (it drops the server's
      condition), so there the class comes from the message's bracketed name;
    - typed payloads (PySpark 3.5's client included): encoded, written with the sink, read back and decoded, in
      Python and in SQL."""
    import pyspark

    if pyspark.__version__ == _default_pyspark():
        pytest.skip("on the default PySpark, the Connect round trips above check the same")
    assert not _port_in_use(LOCAL_CONNECT_PORT), (
        f"port {LOCAL_CONNECT_PORT} is taken: PySpark's local Spark Connect server always listens there")
    result = _run_app("local[2]", kinesalite_server, "unused", "unused", tmp_path, errors_only=True,
                      registry=_registry(glue, kinesalite_server))
    assert result["pyspark"] == pyspark.__version__
    _check_reported(result)
    typed = sorted([i, f"c{i % 7}"] for i in range(ROWS))
    assert sorted(result["registry"]["python"]) == typed
    assert sorted(result["registry"]["stream"]) == typed
    assert sorted(result["registry"]["sql"]) == typed


@pytest.fixture(scope="module")
def connect_server(tmp_path_factory):
    """A Spark Connect server started as a deployment starts one: spark-submit with --jars, loopback only."""
    import pyspark

    workdir = tmp_path_factory.mktemp("connect-server")
    port, token = _free_port(), uuid.uuid4().hex
    spark_home = os.path.dirname(pyspark.__file__)  # the venv's own Spark, whatever SPARK_HOME says
    env = dict(os.environ, SPARK_HOME=spark_home, SPARK_CONNECT_AUTHENTICATE_TOKEN=token, SPARK_LOCAL_IP="127.0.0.1")
    command = [
        os.path.join(spark_home, "bin", "spark-submit"),
        "--class", "org.apache.spark.sql.connect.service.SparkConnectServer",
        "--master", "local[2]",
        "--jars", spark_kinesis.jar_path(),
        "--conf", "spark.connect.grpc.binding.address=127.0.0.1",
        "--conf", f"spark.connect.grpc.binding.port={port}",
        "--conf", "spark.driver.host=127.0.0.1",
        "--conf", "spark.driver.bindAddress=127.0.0.1",
        "--conf", "spark.ui.enabled=false",
        "--conf", "spark.sql.shuffle.partitions=2",
    ]
    log_path = workdir / "server.log"
    with open(log_path, "wb") as log:
        server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=str(workdir),
                                  start_new_session=True)
    try:
        wait_for(lambda: _port_in_use(port) or server.poll() is not None, 180, "Spark Connect server start")
        assert server.poll() is None, f"the Spark Connect server exited:\n{log_path.read_text()[-4000:]}"
        yield f"sc://localhost:{port}", dict(os.environ, SPARK_CONNECT_AUTHENTICATE_TOKEN=token)
    finally:
        server.terminate()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(10)


def test_connect_server_started_with_jars(connect_server, kinesalite_server, glue, tmp_path):
    url, env = connect_server
    kinesis, source, copy = _streams(kinesalite_server)
    result = _run_app(url, kinesalite_server, source, copy, tmp_path, env=env,
                      registry=_registry(glue, kinesalite_server))
    assert "registry" in result
    _check(result, kinesis, source, copy)
