"""Shared fixtures: local Kinesis servers (tests/harness) and one Spark session with the installed wheel's jar."""

from __future__ import annotations

import os
import tempfile
import uuid
from typing import Dict, Iterator

import pytest

pytest_plugins = ["harness.pytest_plugin", "harness.cluster_fixtures"]

# Tests never let an AWS client probe the EC2 metadata service.
os.environ.setdefault("AWS_EC2_METADATA_DISABLED", "true")
# Spark's driver and block manager listen on loopback only.
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "compat: also run by `make test-compat` under other supported PySpark lines (3.5, 4.0, 4.1: see the Makefile)")
    config.addinivalue_line(
        "markers",
        "xdist_group(name): tests of one group run in the same pytest process (pytest-xdist's --dist loadgroup): "
        "the standalone-cluster tests share one cluster")
    config.addinivalue_line(
        "markers",
        "heavy: a compat test that `make test` runs once per jar (on the default PySpark and on 3.5), not on the lines "
        "that share the default's jar (4.0, 4.1); `make test-full` runs it on every line")
    config.addinivalue_line(
        "markers",
        "full: run by `make test-full` only (SPARK_KINESIS_ALL_SUITES=1), skipped by `make test`: a test whose "
        "connector paths others in `make test` cover, kept out of its time budget (docs/testing.md, \"Tiers\")")
    config.addinivalue_line(
        "markers",
        "kinesis_mock: set on every test case run against kinesis-mock (ids with [kinesis-mock]), so that `make "
        "test` can pick a compat line's server cases with -m")
    config.addinivalue_line(
        "markers",
        "jar_codecs: a compat test whose kinesis-mock case `make test` also runs on the lines with a jar of their own "
        "(3.5): it lists, reads and writes through that jar's shaded CBOR codec; the other kinesis-mock cases run on "
        "the default line only")


def pytest_collection_modifyitems(config, items):
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is not None and any(value == "kinesis-mock" for value in callspec.params.values()):
            item.add_marker(pytest.mark.kinesis_mock)
    if os.environ.get("SPARK_KINESIS_ALL_SUITES"):
        return
    skip = pytest.mark.skip(reason="`make test-full` runs it (SPARK_KINESIS_ALL_SUITES=1)")
    for item in items:
        if item.get_closest_marker("full") is not None:
            item.add_marker(skip)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node, ids):
    """Under `--dist loadgroup` pytest-xdist adds each grouped test's group to its node id (`...@cluster`); with a
    pytest it cannot do that with, a group's tests spread over every process, each starting a standalone cluster of
    its own. Fail the run then, rather than run it slower than planned."""
    if node.config.getvalue("dist") == "loadgroup":
        lost = [i for i in ids if i.startswith("tests/test_cluster.py::") and "@" not in i]
        if lost:
            raise pytest.UsageError(f"pytest-xdist did not group {lost[0]} with the other standalone-cluster tests: "
                                    "pin a pytest that pytest-xdist supports (python/requirements-dev.txt)")


@pytest.fixture(scope="session")
def spark() -> Iterator["pyspark.sql.SparkSession"]:  # noqa: F821
    from pyspark.sql import SparkSession

    from spark_kinesis import configure_spark_with_kinesis

    builder = (
        SparkSession.builder.master("local[2]")
        .appName("spark-kinesis-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.memory", "2g")
        # Tables the SQL tests create (tests/test_sql.py) keep their folders out of the working tree.
        .config("spark.sql.warehouse.dir", tempfile.mkdtemp(prefix="spark-kinesis-warehouse-"))
    )
    session = configure_spark_with_kinesis(builder).getOrCreate()
    session.sparkContext.setLogLevel("WARN")
    yield session
    session.stop()


def pyspark_line() -> tuple:
    """The installed PySpark's (major, minor), for tests of what a line has (4.2's trigger(realTime=...))."""
    import pyspark

    return tuple(int(part) for part in pyspark.__version__.split(".")[:2])


def connector_options(server) -> Dict[str, str]:
    """The options that point the connector at a local server (CBOR off for kinesalite, on for kinesis-mock)."""
    return {
        "endpointUrl": server.endpoint,
        "region": "us-east-1",
        "awsAccessKeyId": "local-test-key",
        "awsSecretKey": "local-test-secret",
        "cborEnabled": str(server.cbor_enabled).lower(),
    }


@pytest.fixture
def stream_name(request) -> str:
    """A fresh stream name per test (servers are shared by the whole session)."""
    return f"t-{request.node.name[:40].replace('[', '-').replace(']', '')}-{uuid.uuid4().hex[:8]}"


def stream_reader(spark, server, stream: str, **extra):
    """A streaming DataFrame of the connector on `stream` of a local server, with extra options."""
    opts = dict(connector_options(server), streamName=stream, **{k: str(v) for k, v in extra.items()})
    return spark.readStream.format("kinesis").options(**opts).load()

