"""Batch reads through the installed wheel's jar, checked against what boto3 wrote."""

from __future__ import annotations

import pytest
import random
import time

from conftest import connector_options
from harness import streams

from spark_kinesis import read_kinesis

N = 10_000


def _records(n: int, prefix: str):
    rng = random.Random(7)
    return [(f"{prefix}-{i}-" + "x" * rng.randint(10, 200), f"key-{rng.randint(0, 99)}") for i in range(n)]


@pytest.mark.compat
def test_reads_every_record_exactly_once_from_four_shards(spark, local_kinesis_server, stream_name):
    kinesis = streams.client(local_kinesis_server)
    streams.create_stream(kinesis, stream_name, 4)
    written = _records(N, "r")
    acks = streams.put_records(kinesis, stream_name, written)
    assert len({a["ShardId"] for a in acks}) == 4, "the test data should span all four shards"

    df = read_kinesis(spark, stream_name, **connector_options(local_kinesis_server))
    # Databricks' columns in its order, then this connector's subSequenceNumber (docs/source.md, "Columns").
    assert df.columns == ["partitionKey", "data", "stream", "shardId", "sequenceNumber", "approximateArrivalTimestamp",
                          "subSequenceNumber"]
    rows = df.collect()

    got = [(bytes(r.data).decode(), r.partitionKey) for r in rows]
    assert len(got) == N, f"expected {N} rows, got {len(got)}"
    assert set(got) == set(written)
    # Every row carries where it came from: the shard and sequence number the service acknowledged.
    expected_position = {w: (a["ShardId"], a["SequenceNumber"]) for w, a in zip(written, acks)}
    for r in rows:
        key = (bytes(r.data).decode(), r.partitionKey)
        assert (r.shardId, r.sequenceNumber) == expected_position[key]
        assert r.stream == stream_name
        assert r.subSequenceNumber == 0
        assert r.approximateArrivalTimestamp is not None
    assert df.rdd.getNumPartitions() == 4, "one Spark partition per shard by default"


def test_reads_several_streams_by_name_and_arn(spark, kinesis_mock_server, stream_name):
    kinesis = streams.client(kinesis_mock_server)
    first, second = stream_name + "-a", stream_name + "-b"
    streams.create_stream(kinesis, first, 2)
    summary = streams.create_stream(kinesis, second, 1)
    streams.put_records(kinesis, first, [(f"a{i}", f"k{i}") for i in range(300)])
    streams.put_records(kinesis, second, [(f"b{i}", f"k{i}") for i in range(200)])

    rows = read_kinesis(spark, [first, summary["StreamARN"]], **connector_options(kinesis_mock_server)).collect()

    by_stream = {}
    for r in rows:
        by_stream.setdefault(r.stream, set()).add(bytes(r.data).decode())
    assert by_stream == {first: {f"a{i}" for i in range(300)}, second: {f"b{i}" for i in range(200)}}


def test_reads_from_a_timestamp(spark, local_kinesis_server, stream_name):
    kinesis = streams.client(local_kinesis_server)
    streams.create_stream(kinesis, stream_name, 2)
    streams.put_records(kinesis, stream_name, [(f"old-{i}", f"k{i}") for i in range(200)])
    latest_old = max(r["arrival_timestamp"] for r in streams.read_all(kinesis, stream_name))
    # Await a clock tick past the last old record, so new records get a strictly later arrival time.
    deadline = time.monotonic() + 5
    while time.time() <= latest_old.timestamp() + 0.002 and time.monotonic() < deadline:
        time.sleep(0.001)
    streams.put_records(kinesis, stream_name, [(f"new-{i}", f"k{i}") for i in range(150)])
    first_new = min(r["arrival_timestamp"] for r in streams.read_all(kinesis, stream_name)
                    if r["data"].startswith(b"new-"))
    assert first_new > latest_old

    rows = read_kinesis(
        spark, stream_name, initial_position="at_timestamp",
        initialTimestamp=str(int(first_new.timestamp() * 1000)), **connector_options(local_kinesis_server),
    ).collect()

    assert sorted(bytes(r.data).decode() for r in rows) == sorted(f"new-{i}" for i in range(150))


def test_empty_stream_reads_no_rows(spark, local_kinesis_server, stream_name):
    kinesis = streams.client(local_kinesis_server)
    streams.create_stream(kinesis, stream_name, 3)
    assert read_kinesis(spark, stream_name, **connector_options(local_kinesis_server)).count() == 0


@pytest.mark.compat
def test_the_provider_class_name_is_a_format_no_other_source_can_take(spark, kinesalite_server, stream_name):
    """Where a platform registers a source of its own called `kinesis` (Databricks does), Spark cannot tell the two
    apart by the short name; the provider's class name always names this connector (docs/deploying.md)."""
    provider = "io.sparkkinesis.KinesisSourceProvider"
    options = dict(connector_options(kinesalite_server), streamName=stream_name)
    kinesis = streams.client(kinesalite_server)
    streams.create_stream(kinesis, stream_name, 2)
    rows = [(f"row-{i}", f"key-{i % 5}") for i in range(40)]
    df = spark.createDataFrame(rows, "data string, partitionKey string")
    df.write.format(provider).options(**options).mode("append").save()
    read = spark.read.format(provider).options(**options).load()
    assert sorted((bytes(r.data).decode(), r.partitionKey) for r in read.collect()) == sorted(rows)
