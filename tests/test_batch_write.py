"""Batch writes through the installed wheel's jar, checked with a boto3 reader."""

from __future__ import annotations

import pytest
from conftest import connector_options
from harness import streams

from spark_kinesis import write_kinesis

N = 10_000


@pytest.mark.compat
def test_every_written_row_lands_once(spark, local_kinesis_server, stream_name):
    kinesis = streams.client(local_kinesis_server)
    streams.create_stream(kinesis, stream_name, 4)
    df = spark.range(N).selectExpr(
        "CAST(id AS STRING) AS partitionKey",
        "concat('row-', id, '-', repeat('z', CAST(id % 97 AS INT))) AS data",
    ).repartition(3)

    write_kinesis(df, stream_name, **connector_options(local_kinesis_server))

    read = streams.read_all(kinesis, stream_name)
    got = [(r["data"].decode(), r["partition_key"]) for r in read]
    expected = {(f"row-{i}-" + "z" * (i % 97), str(i)) for i in range(N)}
    assert len(got) == N, f"expected {N} records in the stream, found {len(got)} (duplicates or losses)"
    assert set(got) == expected


def test_binary_data_round_trips(spark, kinesalite_server, stream_name):
    kinesis = streams.client(kinesalite_server)
    streams.create_stream(kinesis, stream_name, 1)
    payloads = [bytes([i % 256, 0, 255 - i % 256]) * (i + 1) for i in range(100)]
    df = spark.createDataFrame([(p, f"k{i}") for i, p in enumerate(payloads)], "data binary, partitionKey string")

    write_kinesis(df, stream_name, **connector_options(kinesalite_server))

    assert sorted(r["data"] for r in streams.read_all(kinesis, stream_name)) == sorted(payloads)
