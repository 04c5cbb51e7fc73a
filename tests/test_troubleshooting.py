"""Every error listed in docs/troubleshooting.md is produced, with the documented message, by a test here.

The page lists errors under `### [CONDITION] ...` headings, each with one or more message lines
(`> `message``, where `…` stands for the variable parts). For each condition there is a test named
`test_<condition in lower case>` that triggers the error for real (local servers, the fault proxy for denied
and refused calls, fresh JVMs for a session without the jar and a machine without a region) and checks that
every documented message of that condition matches what the connector said. `test_every_documented_error_is_
triggered` fails when the page lists a condition without such a test, or a test has no entry on the page.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Dict, List

import pytest

from conftest import connector_options, stream_reader
from spark_kinesis import kinesis_stream
from harness import streams
from harness.waiting import QUERY_END_S, wait_for
from harness.fault_fixtures import fault_proxy  # noqa: F401 (pytest fixture)
from harness.fault_proxy import STALE_LISTING

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "troubleshooting.md"
FRESH_JVM_TIMEOUT_S = 300


def documented_errors() -> Dict[str, List[str]]:
    """Condition -> the message lines of its entry, in page order."""
    entries: Dict[str, List[str]] = {}
    current = None
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if line.startswith("### "):
            match = re.match(r"### \[([A-Z_]+)\] ", line)
            assert match, f"a troubleshooting entry must start with its [CONDITION]: {line!r}"
            current = match.group(1)
            assert current not in entries, f"{current} is listed twice"
            entries[current] = []
        elif line.startswith("#"):
            current = None
        elif current and line.startswith("> `") and line.endswith("`"):
            entries[current].append(line[3:-1])
    return entries


ENTRIES = documented_errors()


def _regex(message: str) -> "re.Pattern[str]":
    return re.compile(".+?".join(re.escape(part) for part in message.split("…")))


def assert_documented(condition: str, errors: List[str]) -> None:
    """Every message the page shows for `condition` is one of `errors` (the texts the test provoked)."""
    messages = ENTRIES.get(condition)
    assert messages, f"docs/troubleshooting.md has no message for [{condition}]"
    for message in messages:
        assert any(_regex(message).search(error) for error in errors), \
            f"no error matched the documented message\n  {message}\nerrors:\n" + "\n".join(f"  {e[:1500]}" for e in errors)


def _error(action: Callable[[], object]) -> str:
    with pytest.raises(Exception) as info:
        action()
    return str(info.value)


def test_every_documented_error_is_triggered():
    assert len(ENTRIES) >= 10, sorted(ENTRIES)
    tests = {name[len("test_"):].upper() for name, value in globals().items()
             if name.startswith("test_") and callable(value) and name != "test_every_documented_error_is_triggered"}
    assert set(ENTRIES) - tests == set(), "documented errors without a test that triggers them"
    assert tests - set(ENTRIES) == set(), "trigger tests for errors the page does not list"
    assert all(ENTRIES.values()), [c for c, m in ENTRIES.items() if not m]


# ---- setting up ----

def test_kinesis_version_mismatch(monkeypatch):
    """The PySpark a user installed is a Spark version no bundled jar serves."""
    import pyspark
    from pyspark.sql import SparkSession

    from spark_kinesis import configure_spark_with_kinesis
    from spark_kinesis.errors import KinesisVersionError

    monkeypatch.setattr(pyspark, "__version__", "3.4.1")
    with pytest.raises(KinesisVersionError) as info:
        configure_spark_with_kinesis(SparkSession.builder)
    assert info.value.condition == "KINESIS_VERSION_MISMATCH"
    assert "has no jar for Spark 3.4.1" in str(info.value)
    assert_documented("KINESIS_VERSION_MISMATCH", [str(info.value)])


# ---- options ----

def _read(spark, server, **options):
    return spark.read.format("kinesis").options(**connector_options(server), **options)


def test_kinesis_unknown_option(spark, kinesalite_server):
    from spark_kinesis import read_kinesis
    from spark_kinesis.errors import KinesisOptionError

    jvm = _error(lambda: _read(spark, kinesalite_server, streamName="s", initialPositon="trim_horizon").load())
    with pytest.raises(KinesisOptionError) as python:
        read_kinesis(spark, "orders", regoin="eu-west-1")
    assert "Did you mean 'initialPosition'?" in jvm
    assert "Unknown option 'regoin'. Did you mean 'region'?" in str(python.value)
    assert_documented("KINESIS_UNKNOWN_OPTION", [jvm, str(python.value)])


def test_kinesis_option_not_applicable(spark, kinesalite_server):
    error = _error(lambda: _read(spark, kinesalite_server, streamName="s", maxRetries="3").load().collect())
    assert "Option 'maxRetries' applies to the Kinesis sink only, not to the source" in error
    assert_documented("KINESIS_OPTION_NOT_APPLICABLE", [error])


def test_kinesis_invalid_option_value(spark, kinesalite_server, stream_name):
    streams.create_stream(streams.client(kinesalite_server), stream_name, 1)  # load() checks that it exists
    errors = [
        _error(lambda: _read(spark, kinesalite_server, streamName="s", initialPosition="beginning").load().collect()),
        _error(lambda: _read(spark, kinesalite_server, streamName=stream_name,
                             initialPosition="latest").load().collect()),
    ]
    assert "one of latest, trim_horizon, earliest, at_timestamp" in errors[0]
    assert "for a batch read" in errors[1]
    assert_documented("KINESIS_INVALID_OPTION_VALUE", errors)


def test_kinesis_conflicting_options(spark, kinesalite_server):
    options = dict(connector_options(kinesalite_server), streamName="s")
    del options["awsSecretKey"]
    keyless = {k: v for k, v in options.items() if k != "awsAccessKeyId"}
    roles = ",".join(f"arn:aws:iam::123456789012:role/hop{i}" for i in range(3))
    errors = [
        _error(lambda: spark.read.format("kinesis").options(**options).load().collect()),
        _error(lambda: _read(spark, kinesalite_server, streamName="s",
                             initialTimestamp="2026-01-31T12:00:00Z").load().collect()),
        # Two bases of credentials; a role chain with one external id too few; FIPS where Kinesis has none.
        _error(lambda: spark.read.format("kinesis").options(**keyless, awsProfile="p",
                                                            webIdentityTokenFile="token").load().collect()),
        _error(lambda: _read(spark, kinesalite_server, streamName="s", roleArn=roles,
                             roleExternalId="a,b").load().collect()),
        _error(lambda: spark.read.format("kinesis").options(**dict(options, awsSecretKey="local-test-secret",
                                                                   region="eu-west-1")).option(
            "roleArn", "arn:aws:iam::123456789012:role/r").option("useFipsEndpoint", "true").load().collect()),
    ]
    assert_documented("KINESIS_CONFLICTING_OPTIONS", errors)


def test_kinesis_unsupported_option(spark, kinesalite_server):
    """An option of another connector that cannot be honoured here (docs/migrating.md)."""
    error = _error(lambda: _read(spark, kinesalite_server, streamName="s", serviceCredential="uc-cred").load())
    assert "uc-cred" not in error
    assert_documented("KINESIS_UNSUPPORTED_OPTION", [error])


def test_kinesis_invalid_stream_name(spark, kinesalite_server):
    error = _error(lambda: _read(spark, kinesalite_server, streamName="orders stream").load())
    assert "Stream 'orders stream' in option 'streamName'" in error
    assert_documented("KINESIS_INVALID_STREAM_NAME", [error])


def test_kinesis_user_schema_not_allowed(spark, kinesalite_server):
    error = _error(lambda: spark.read.format("kinesis").schema("id long, amount double")
                   .options(**connector_options(kinesalite_server), streamName="s").load().collect())
    assert_documented("KINESIS_USER_SCHEMA_NOT_ALLOWED", [error])


# ---- SQL: a Kinesis catalog ----

def _catalog(spark, server, name: str, **extra) -> str:
    """Registers Kinesis catalog `name` on `server` in the running session (catalogs are set up at first use)."""
    spark.conf.set(f"spark.sql.catalog.{name}", "io.sparkkinesis.KinesisCatalog")
    for key, value in dict(connector_options(server), **extra).items():
        spark.conf.set(f"spark.sql.catalog.{name}.{key}", value)
    return name


def test_kinesis_invalid_table_property(spark, kinesalite_server, stream_name):
    catalog = _catalog(spark, kinesalite_server, "trouble_props")
    count = _error(lambda: spark.sql(f"CREATE TABLE {catalog}.`{stream_name}` TBLPROPERTIES ('shardCount' = 'four')"))
    option = _error(lambda: spark.sql(f"CREATE TABLE {catalog}.`{stream_name}` USING kinesis OPTIONS (region 'x') "
                                      "TBLPROPERTIES ('shardCount' = '1')"))
    assert_documented("KINESIS_INVALID_TABLE_PROPERTY", [count, option])


def test_kinesis_catalog_change_not_allowed(spark, kinesalite_server, stream_name):
    streams.create_stream(streams.client(kinesalite_server), stream_name, 1)
    catalog = _catalog(spark, kinesalite_server, "trouble_guarded")
    drop = _error(lambda: spark.sql(f"DROP TABLE {catalog}.`{stream_name}`"))
    alter = _error(lambda: spark.sql(f"ALTER TABLE {catalog}.`{stream_name}` SET TBLPROPERTIES ('shardCount' = '2')"))
    create = _error(lambda: spark.sql(f"CREATE TABLE {catalog}.`{stream_name}-new` TBLPROPERTIES ('shardCount' = '1')"))
    assert "allowCreateStream=true" in create
    assert_documented("KINESIS_CATALOG_CHANGE_NOT_ALLOWED", [drop, alter, create])
    assert streams.client(kinesalite_server).describe_stream_summary(StreamName=stream_name)


# ---- writing: the DataFrame ----

def _write(df, server, stream: str, **options) -> None:
    df.write.format("kinesis").options(**connector_options(server), streamName=stream, **options) \
        .mode("append").save()


def test_kinesis_invalid_sink_schema(spark, kinesalite_server):
    df = spark.createDataFrame([("a", "k", 1)], "data string, partitionKey string, amount int")
    error = _error(lambda: _write(df, kinesalite_server, "s"))
    assert "Unexpected column(s) amount." in error
    assert_documented("KINESIS_INVALID_SINK_SCHEMA", [error])


def test_kinesis_invalid_sink_row(spark, kinesalite_server, stream_name):
    streams.create_stream(streams.client(kinesalite_server), stream_name, 1)
    null_data = spark.createDataFrame([("a", "k"), (None, "k")], "data string, partitionKey string").coalesce(1)
    null_key = spark.createDataFrame([("a", None)], "data string, partitionKey string").coalesce(1)
    errors = [_error(lambda: _write(null_data, kinesalite_server, stream_name)),
              _error(lambda: _write(null_key, kinesalite_server, stream_name))]
    assert "The row at row 1 of partition 0" in errors[0]
    assert_documented("KINESIS_INVALID_SINK_ROW", errors)


def test_kinesis_record_too_large(spark, kinesalite_server, stream_name):
    streams.create_stream(streams.client(kinesalite_server), stream_name, 1)
    df = spark.range(1).selectExpr("repeat('x', 1048576) AS data", "'key' AS partitionKey")
    error = _error(lambda: _write(df, kinesalite_server, stream_name))
    assert "is 1048579 bytes (partition key plus data), over the limit of 1048576 bytes" in error
    assert_documented("KINESIS_RECORD_TOO_LARGE", [error])


# ---- reading and writing: the service ----

def _one_row(spark):
    return spark.createDataFrame([("a", "k")], "data string, partitionKey string")


def test_kinesis_stream_not_found(spark, kinesalite_server):
    errors = [_error(lambda: _read(spark, kinesalite_server, streamName="no-such-stream").load().collect()),
              _error(lambda: _write(_one_row(spark), kinesalite_server, "no-such-stream"))]
    assert all("Stream 'no-such-stream' does not exist" in e for e in errors)
    assert_documented("KINESIS_STREAM_NOT_FOUND", errors)


def test_kinesis_access_denied(spark, fault_proxy, stream_name):
    streams.create_stream(streams.client(fault_proxy.upstream_endpoint), stream_name, 1)
    fault_proxy.inject_error("ListShards", "AccessDeniedException", message=(
        "User: arn:aws:iam::123456789012:user/reader is not authorized to perform: kinesis:ListShards"))
    fault_proxy.inject_error("PutRecords", "AccessDeniedException", message=(
        "User: arn:aws:iam::123456789012:user/writer is not authorized to perform: kinesis:PutRecords"))
    errors = [_error(lambda: _read(spark, fault_proxy, streamName=stream_name).load().collect()),
              _error(lambda: _write(_one_row(spark), fault_proxy, stream_name))]
    assert fault_proxy.calls("ListShards") == 1 and fault_proxy.calls("PutRecords") == 1, "never retried"
    assert_documented("KINESIS_ACCESS_DENIED", errors)


def test_kinesis_data_loss(spark, kinesalite_server, stream_name, tmp_path):
    """A checkpoint outlives a shard it had not finished: the stream is deleted and created again, smaller."""
    kinesis = streams.client(kinesalite_server)
    streams.create_stream(kinesis, stream_name, 2)
    streams.put_records(kinesis, stream_name, [(f"record-{i}", f"key-{i}") for i in range(20)])
    checkpoint = str(tmp_path / "checkpoint")

    def run():
        return (stream_reader(spark, kinesalite_server, stream_name, initialPosition="trim_horizon")
                .writeStream.format("noop").option("checkpointLocation", checkpoint)
                .trigger(availableNow=True).start())

    first = run()
    assert first.awaitTermination(QUERY_END_S), "the first run did not finish"
    assert first.exception() is None and sum(p["numInputRows"] for p in first.recentProgress) == 20
    streams.delete_stream(kinesis, stream_name)
    streams.create_stream(kinesis, stream_name, 1)

    second = run()
    error = _error(lambda: second.awaitTermination(QUERY_END_S))
    assert "Records of shard shardId-000000000001 of stream" in error
    assert_documented("KINESIS_DATA_LOSS", [error])


def test_kinesis_read_stalled(spark, fault_proxy, stream_name, tmp_path):
    """An AvailableNow query one of whose shards answers nothing, while behind, on every call: it fails within
    stallTimeout, naming the shard, instead of waiting forever; the other shard was read."""
    kinesis = streams.client(fault_proxy.upstream_endpoint)
    streams.create_stream(kinesis, stream_name, 2)
    streams.put_records(kinesis, stream_name, [(f"record-{i}", f"key-{i}") for i in range(40)])
    fault_proxy.stall(stream_name, "shardId-000000000001")
    query = (stream_reader(spark, fault_proxy, stream_name, initialPosition="trim_horizon", stallTimeout="10s")
             .writeStream.format("noop").option("checkpointLocation", str(tmp_path / "checkpoint"))
             .trigger(availableNow=True).start())
    started = time.monotonic()
    error = _error(lambda: query.awaitTermination(QUERY_END_S))
    assert time.monotonic() - started < 90, "the query did not fail within its bound"
    # The query's failure also shows its offsets, which name every shard: the connector's message names one.
    message = next(line for line in error.splitlines() if "[KINESIS_READ_STALLED]" in line)
    assert "shard shardId-000000000001 of stream" in message and "shardId-000000000000" not in message, message
    assert fault_proxy.injected("stalled", "GetRecords") > 0
    assert_documented("KINESIS_READ_STALLED", [error])


def test_kinesis_streams_changed(spark, kinesalite_server, stream_name, tmp_path):
    """A checkpoint of two streams restarted with one of them."""
    kinesis = streams.client(kinesalite_server)
    other = stream_name + "-other"
    for name in (stream_name, other):
        streams.create_stream(kinesis, name, 1)
        streams.put_records(kinesis, name, [(f"{name}-{i}", "k") for i in range(5)])
    checkpoint = str(tmp_path / "checkpoint")

    def run(names: str):
        return (stream_reader(spark, kinesalite_server, names, initialPosition="trim_horizon")
                .writeStream.format("noop").option("checkpointLocation", checkpoint)
                .trigger(availableNow=True).start())

    first = run(f"{stream_name},{other}")
    assert first.awaitTermination(QUERY_END_S), "the first run did not finish"
    assert first.exception() is None and sum(p["numInputRows"] for p in first.recentProgress) == 10
    second = run(stream_name)
    error = _error(lambda: second.awaitTermination(QUERY_END_S))
    assert f"'{other}'" in error
    assert_documented("KINESIS_STREAMS_CHANGED", [error])


def test_kinesis_option_not_in_real_time_mode(spark, kinesalite_server, stream_name, tmp_path):
    """A per-trigger budget on a query in real-time mode (Spark 4.1+), through the unchanged Python helper."""
    streams.create_stream(streams.client(kinesalite_server), stream_name, 1)
    query = (kinesis_stream(spark, stream_name, **connector_options(kinesalite_server), max_records_per_trigger=100)
             .writeStream.foreach(lambda row: None).outputMode("update")
             .option("checkpointLocation", str(tmp_path / "checkpoint")).trigger(realTime="5 seconds").start())
    error = _error(lambda: query.awaitTermination(QUERY_END_S))
    assert "'maxRecordsPerTrigger'" in error
    assert_documented("KINESIS_OPTION_NOT_IN_REAL_TIME_MODE", [error])


def _registered(kinesis, stream_arn: str, name: str) -> bool:
    try:
        kinesis.register_stream_consumer(StreamARN=stream_arn, ConsumerName=name)
        return True
    except kinesis.exceptions.LimitExceededException as e:
        if "at the same time" in str(e):
            return False
        raise


def _efo_query(spark, server, stream: str, checkpoint: str, **extra):
    return (stream_reader(spark, server, stream, initialPosition="trim_horizon", consumerMode="efo", **extra)
            .writeStream.format("noop").option("checkpointLocation", checkpoint).trigger(availableNow=True).start())


def test_kinesis_consumer_limit(spark, kinesis_mock_server, stream_name, tmp_path):
    """A stream that already has 20 consumers (kinesis-mock enforces the limit): an EFO query cannot register."""
    kinesis = streams.client(kinesis_mock_server)
    streams.create_stream(kinesis, stream_name, 1)
    arn = kinesis.describe_stream_summary(StreamName=stream_name)["StreamDescriptionSummary"]["StreamARN"]
    for i in range(20):  # kinesis-mock lets 5 be created at the same time, as AWS does: wait those out
        wait_for(lambda: _registered(kinesis, arn, f"other-{i}"), 60, f"consumer other-{i} registered", interval=0.1)
    query = _efo_query(spark, kinesis_mock_server, stream_name, str(tmp_path / "checkpoint"))
    error = _error(lambda: query.awaitTermination(QUERY_END_S))
    assert f"stream '{stream_name}'" in error
    assert_documented("KINESIS_CONSUMER_LIMIT", [error])


def test_kinesis_consumer_not_found(spark, kinesis_mock_server, stream_name, tmp_path):
    """registeredConsumerId names a consumer the stream does not have: the query fails without registering it."""
    kinesis = streams.client(kinesis_mock_server)
    streams.create_stream(kinesis, stream_name, 1)
    query = _efo_query(spark, kinesis_mock_server, stream_name, str(tmp_path / "checkpoint"),
                       registeredConsumerId="nobody-registered-me")
    error = _error(lambda: query.awaitTermination(QUERY_END_S))
    assert "nobody-registered-me" in error
    arn = kinesis.describe_stream_summary(StreamName=stream_name)["StreamDescriptionSummary"]["StreamARN"]
    assert kinesis.list_stream_consumers(StreamARN=arn)["Consumers"] == [], "a registered consumer is never created"
    assert_documented("KINESIS_CONSUMER_NOT_FOUND", [error])


def test_kinesis_invalid_offset(spark, kinesalite_server, stream_name, tmp_path):
    """The initial offset file of a checkpoint, damaged: the query fails, naming the file and the field."""
    kinesis = streams.client(kinesalite_server)
    streams.create_stream(kinesis, stream_name, 1)
    checkpoint = tmp_path / "checkpoint"

    def run():
        return (stream_reader(spark, kinesalite_server, stream_name, initialPosition="trim_horizon")
                .writeStream.format("noop").option("checkpointLocation", str(checkpoint))
                .trigger(availableNow=True).start())

    first = run()
    assert first.awaitTermination(QUERY_END_S) and first.exception() is None
    initial = checkpoint / "sources" / "0" / "kinesis-initial-offset.json"
    assert initial.exists(), sorted(str(p) for p in checkpoint.rglob("*"))
    # Keep the offset log from answering first: only the initial offset file is left to read.
    for log in ("offsets", "commits"):
        for entry in (checkpoint / log).iterdir():
            entry.unlink()
    initial.write_text('{"version":1,"streams":[]}', encoding="utf-8")
    (initial.parent / f".{initial.name}.crc").unlink(missing_ok=True)  # Hadoop's checksum of the old content
    second = run()
    error = _error(lambda: second.awaitTermination(QUERY_END_S))
    assert "kinesis-initial-offset.json" in error and "'streams' must be a JSON object" in error
    assert_documented("KINESIS_INVALID_OFFSET", [error])


def test_kinesis_foreign_checkpoint(spark, kinesalite_server, stream_name, tmp_path):
    """A checkpoint of the awslabs connector whose last committed batch left no shard files (DynamoDB metadata)."""
    streams.create_stream(streams.client(kinesalite_server), stream_name, 1)
    checkpoint = tmp_path / "checkpoint"
    for name, text in {
        "metadata": '{"id":"6f1b1e9e-2c55-4d5e-9a57-1b1f4f0e2a10"}',
        "offsets/0": 'v1\n{"batchWatermarkMs":0,"batchTimestampMs":0,"conf":{}}\n'
                     f'{{"metadata":{{"streamName":"{stream_name}","batchId":"0"}},"shardId-000000000000":'
                     '{"iteratorType":"TRIM_HORIZON","iteratorPosition":"","subSequenceNumber":"-1","isLast":"true"}}',
        "commits/0": 'v1\n{"nextBatchWatermarkMs":0}',
    }.items():
        (checkpoint / name).parent.mkdir(parents=True, exist_ok=True)
        (checkpoint / name).write_text(text, encoding="utf-8")
    query = (stream_reader(spark, kinesalite_server, stream_name)
             .writeStream.format("noop").option("checkpointLocation", str(checkpoint))
             .trigger(availableNow=True).start())
    error = _error(lambda: query.awaitTermination(QUERY_END_S))
    assert "shard-source/0" in error
    assert_documented("KINESIS_FOREIGN_CHECKPOINT", [error])


def test_kinesis_retries_exhausted(spark, fault_proxy, stream_name):
    streams.create_stream(streams.client(fault_proxy.upstream_endpoint), stream_name, 1)
    fault_proxy.throttle_put_records(1.0)
    error = _error(lambda: _write(_one_row(spark), fault_proxy, stream_name, maxRetries="2"))
    assert "failed 3 times" in error
    assert fault_proxy.calls("PutRecords") == 3
    assert_documented("KINESIS_RETRIES_EXHAUSTED", [error])


def test_kinesis_endpoint_unreachable(spark, kinesalite_server):
    from spark_kinesis import read_kinesis, write_kinesis
    from spark_kinesis.errors import KinesisEndpointUnreachableError

    keys = {"awsAccessKeyId": "k", "awsSecretKey": "s"}
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}"
    start = time.monotonic()
    with pytest.raises(KinesisEndpointUnreachableError) as refused:
        read_kinesis(spark, "orders", region="us-east-1", endpoint_url=closed, **keys)
    seconds = time.monotonic() - start
    wrong_region = _error(lambda: read_kinesis(spark, "orders", region="xx-nowhere-1", **keys))
    sts = _error(lambda: write_kinesis(_one_row(spark), "orders", **connector_options(kinesalite_server),
                                       roleArn="arn:aws:iam::123456789012:role/writer", stsEndpointUrl=closed))
    # A guard against waiting out the normal budgets (3 to 8 s on an idle machine): the condition proves the first-
    # contact budget applied, and FastFailureSuite checks its length on a virtual clock.
    assert seconds < 60, f"{seconds:.1f} s"
    assert f"Cannot connect to the Kinesis endpoint {closed} (region 'us-east-1')" in str(refused.value)
    assert f"Cannot connect to the STS endpoint {closed}" in sts
    assert_documented("KINESIS_ENDPOINT_UNREACHABLE", [str(refused.value), wrong_region, sts])


def test_kinesis_record_rejected(spark, fault_proxy, stream_name):
    streams.create_stream(streams.client(fault_proxy.upstream_endpoint), stream_name, 1)
    fault_proxy.fail_put_entries(1.0, error_code="InvalidArgumentException", message="the record was refused")
    error = _error(lambda: _write(_one_row(spark), fault_proxy, stream_name))
    assert "with InvalidArgumentException: the record was refused" in error
    assert_documented("KINESIS_RECORD_REJECTED", [error])


def test_kinesis_shard_listing_behind(spark, fault_proxy, stream_name):
    upstream = streams.client(fault_proxy.upstream_endpoint)
    streams.create_stream(upstream, stream_name, 1)
    # The proxy keeps the listing from before the split: the sink packs for the parent, its aggregate lands in a child
    # that no listing shows.
    fault_proxy.stale_listing(stream_name)
    streams.client(fault_proxy).list_shards(StreamName=stream_name)
    streams.split_in_half(upstream, stream_name, "shardId-000000000000")
    rows = spark.createDataFrame([(str(i), f"k{i}") for i in range(50)], "data string, partitionKey string")
    error = _error(lambda: _write(rows.coalesce(1), fault_proxy, stream_name, aggregation="kpl", maxRetries="1"))
    assert f"written to stream '{stream_name}' landed in shard shardId-00000000000" in error
    assert "after 2 listings" in error
    assert fault_proxy.injected(STALE_LISTING) >= 2
    assert_documented("KINESIS_SHARD_LISTING_BEHIND", [error])


def test_kinesis_service_error(spark, fault_proxy, stream_name):
    streams.create_stream(streams.client(fault_proxy.upstream_endpoint), stream_name, 1)
    fault_proxy.inject_error("PutRecords", "KMSDisabledException",
                             message="The request was rejected because the specified CMK is not enabled.")
    error = _error(lambda: _write(_one_row(spark), fault_proxy, stream_name))
    assert "the specified CMK is not enabled" in error
    assert_documented("KINESIS_SERVICE_ERROR", [error])


# ---- errors that need a JVM of their own ----
# Both JVMs start with the module (autouse fixture) and are checked last, so they run while the tests above do.

FRESH_JVM_SCRIPT = '''
import sys
from pyspark.sql import SparkSession

builder = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
           .config("spark.ui.showConsoleProgress", "false")
           .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1"))
try:
    if sys.argv[1] == "without-jar":        # a session started without configure_spark_with_kinesis
        spark = builder.getOrCreate()
        spark.read.format("kinesis").option("streamName", "orders").load()
    elif sys.argv[1] == "without-jar-python":  # the same, met through the package's functions
        from spark_kinesis import read_kinesis
        spark = builder.getOrCreate()
        read_kinesis(spark, "orders", region="us-east-1")
    elif sys.argv[1] == "without-credentials":  # no credential option, nothing in the default chain
        from spark_kinesis import configure_spark_with_kinesis, read_kinesis
        spark = configure_spark_with_kinesis(builder).getOrCreate()
        read_kinesis(spark, "orders", region="us-east-1", endpoint_url="http://127.0.0.1:9").collect()
    else:                                   # no region option, no AWS_REGION, no AWS config file
        from spark_kinesis import configure_spark_with_kinesis, read_kinesis
        spark = configure_spark_with_kinesis(builder).getOrCreate()
        read_kinesis(spark, "orders").collect()
    print("NO ERROR")
except Exception as error:
    print(error)
'''


@pytest.fixture(scope="module", autouse=True)
def fresh_jvms(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fresh-jvm")
    script = folder / "trigger.py"
    script.write_text(FRESH_JVM_SCRIPT, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_") and k != "PYTHONPATH"}
    env.update(AWS_EC2_METADATA_DISABLED="true", SPARK_LOCAL_IP="127.0.0.1", HOME=str(folder),
               AWS_CONFIG_FILE=str(folder / "no-aws-config"),
               AWS_SHARED_CREDENTIALS_FILE=str(folder / "no-aws-credentials"))
    processes = {mode: subprocess.Popen([sys.executable, str(script), mode], cwd=folder, env=env, text=True,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
                 for mode in ("without-jar", "without-jar-python", "without-region", "without-credentials")}

    def result(mode: str) -> str:
        stdout, _ = processes[mode].communicate(timeout=FRESH_JVM_TIMEOUT_S)
        assert processes[mode].returncode == 0, stdout
        return stdout

    yield result
    for process in processes.values():
        if process.poll() is None:
            process.kill()
            process.communicate(timeout=30)


def test_data_source_not_found(fresh_jvms):
    assert_documented("DATA_SOURCE_NOT_FOUND", [fresh_jvms("without-jar")])


def test_kinesis_connector_not_found(fresh_jvms):
    assert_documented("KINESIS_CONNECTOR_NOT_FOUND", [fresh_jvms("without-jar-python")])


def test_kinesis_no_credentials(fresh_jvms):
    # Fails at once (not after the retry budget), and names the ways to give credentials.
    assert_documented("KINESIS_NO_CREDENTIALS", [fresh_jvms("without-credentials")])


def test_kinesis_missing_option(spark, fresh_jvms):
    errors = [
        _error(lambda: spark.read.format("kinesis").option("region", "us-east-1").load()),
        _error(lambda: spark.read.format("kinesis").options(streamName="s", initialPosition="at_timestamp",
                                                            region="us-east-1").load().collect()),
        fresh_jvms("without-region"),
    ]
    assert "[KINESIS_MISSING_OPTION] Option 'streamName' is required" in errors[0]
    assert "[KINESIS_MISSING_OPTION] Option 'initialTimestamp' is required" in errors[1]
    assert "[KINESIS_MISSING_OPTION] Option 'region' is required" in errors[2]
    assert_documented("KINESIS_MISSING_OPTION", errors)


# ---- typed payloads: the schema registry functions ----

ORDER_AVRO = ('{"type": "record", "name": "Order", "fields": [{"name": "id", "type": "long"}, '
              '{"name": "customer", "type": "string"}]}')


@pytest.fixture(scope="module")
def glue_registry(tmp_path_factory):
    """moto's Glue on loopback: the options that reach it, with a registry and the schema `orders` in it."""
    import boto3

    from harness import moto

    with moto.running(tmp_path_factory.mktemp("moto-glue")) as endpoint:
        glue = boto3.client("glue", endpoint_url=endpoint, region_name="us-east-1",
                            aws_access_key_id="local-test-key", aws_secret_access_key="local-test-secret")
        glue.create_registry(RegistryName="trouble")
        glue.create_schema(RegistryId={"RegistryName": "trouble"}, SchemaName="orders", DataFormat="AVRO",
                           Compatibility="BACKWARD", SchemaDefinition=ORDER_AVRO)
        yield {"registryEndpointUrl": endpoint, "region": "us-east-1", "awsAccessKeyId": "local-test-key",
               "awsSecretKey": "local-test-secret", "registryName": "trouble"}


def test_kinesis_invalid_schema(spark, glue_registry):
    from pyspark.sql import functions as F

    from spark_kinesis import from_glue_schema_registry, to_glue_schema_registry

    not_avro = _error(lambda: from_glue_schema_registry("data", schema_definition="{not json", framing="none",
                                                        region="us-east-1"))
    unfit = _error(lambda: spark.range(1).select(
        to_glue_schema_registry(F.struct(F.col("id").alias("order_id")), None, glue_registry, schema_name="orders"))
        .collect())
    assert_documented("KINESIS_INVALID_SCHEMA", [not_avro, unfit])


def test_kinesis_schema_registry_error(spark, glue_registry):
    from spark_kinesis import from_glue_schema_registry

    missing = _error(lambda: from_glue_schema_registry("data", glue_registry, schema_name="no-such-schema"))
    assert_documented("KINESIS_SCHEMA_REGISTRY_ERROR", [missing])


def test_kinesis_schema_decode_failed(spark, glue_registry):
    from spark_kinesis import from_glue_schema_registry

    df = spark.createDataFrame([(b"\x01not a framed payload",)], "data binary")
    failed = _error(lambda: df.select(from_glue_schema_registry("data", glue_registry, schema_name="orders"))
                    .collect())
    assert_documented("KINESIS_SCHEMA_DECODE_FAILED", [failed])


def test_kinesis_dynamodb_json_unreadable(spark):
    from spark_kinesis import from_dynamodb_json

    df = spark.createDataFrame([('{"total": {"N": "1.50"}}',), ('{"total": {"N": "12.505"}}',)], "item string")
    failed = _error(lambda: df.select(from_dynamodb_json("item", "total DECIMAL(12,2)")).collect())
    assert_documented("KINESIS_DYNAMODB_JSON_UNREADABLE", [failed])


def test_kinesis_dynamodb_stream_not_enabled(spark, tmp_path):
    import boto3

    from harness import moto
    from spark_kinesis import dynamodb_stream

    with moto.running(tmp_path) as endpoint:
        dynamodb = boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-east-1",
                                aws_access_key_id="local-test-key", aws_secret_access_key="local-test-secret")
        dynamodb.create_table(TableName="trouble-no-stream", BillingMode="PAY_PER_REQUEST",
                              KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                              AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}])
        failed = _error(lambda: dynamodb_stream(spark, "trouble-no-stream", endpoint_url=endpoint, region="us-east-1",
                                                awsAccessKeyId="local-test-key", awsSecretKey="local-test-secret"))
    assert_documented("KINESIS_DYNAMODB_STREAM_NOT_ENABLED", [failed])


def test_kinesis_schema_encode_failed(spark, glue_registry):
    from pyspark.sql import functions as F

    from spark_kinesis import to_glue_schema_registry

    df = spark.createDataFrame([(1, "c1"), (2, None)], "id long, customer string")
    failed = _error(lambda: df.select(to_glue_schema_registry(F.struct("id", "customer"), None, glue_registry,
                                                              schema_name="orders")).collect())
    assert_documented("KINESIS_SCHEMA_ENCODE_FAILED", [failed])
