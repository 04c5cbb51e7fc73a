"""The sink through Spark and the fault-injecting proxy: limits, partial failures, ordering, fatal errors.

Issue 5, "Done when" 1 to 4 (scenarios S1 to S4), end to end: ``df.write.format("kinesis")`` in front of
``harness/fault_proxy.py`` in front of kinesalite. The proxy records every PutRecords request and injects
failures; what really landed is read with boto3 from kinesalite directly, bypassing the proxy.
"""

from __future__ import annotations

import time
from collections import defaultdict

import pytest

from conftest import connector_options
from harness import streams
from harness.fault_fixtures import create_stream, fault_proxy, landed  # noqa: F401 (fault_proxy: pytest fixture)
from harness.fault_proxy import FAILED_PUT_ENTRIES
from harness.waiting import wait_for

MiB = 1024 * 1024


def _write(df, options, **extra):
    df.write.format("kinesis").options(**options, **extra).mode("append").save()


def sink_metrics(spark):
    """The Kinesis sink metrics of the latest SQL execution, by description, as Spark shows them."""
    jvm = spark._jvm
    store = spark._jsparkSession.sharedState().statusStore()

    def latest_execution():
        executions = store.executionsList()
        return max((executions.apply(i) for i in range(executions.size())), key=lambda e: e.executionId())

    # The write returns when its job ends; Spark's listeners get the tasks' metrics a moment later, on their own
    # thread. Once the execution's end is in the store, every task's end (posted before it) is too.
    latest = wait_for(lambda: (lambda e: e if e.completionTime().isDefined() else None)(latest_execution()), 30,
                      "the write's SQL execution ends in the status store")
    values = store.executionMetrics(latest.executionId())
    out = {}
    metrics = latest.metrics()
    for i in range(metrics.size()):
        metric = metrics.apply(i)
        value = values.get(jvm.java.lang.Long.valueOf(metric.accumulatorId()))
        if metric.name().startswith("Kinesis") and value.isDefined():
            out[metric.name()] = int(value.get().replace(",", ""))
    return out


def test_limits_hold_for_mixed_sizes_and_every_row_lands_once(spark, fault_proxy, stream_name):
    """Done 1 / S1: 10,000 rows, some near 1 MiB with 256-character keys."""
    create_stream(fault_proxy, stream_name, 4)
    big = "id % 400 = 7 OR id BETWEEN 2000 AND 2011 OR id BETWEEN 7000 AND 7008"
    df = (spark.range(0, 10_000, 1, 3)
          .selectExpr("id",
                      "IF(id % 3 = 0, concat(repeat('k', 250), lpad(CAST(id AS STRING), 6, '0')), "
                      "concat('key-', CAST(id % 101 AS STRING))) AS partitionKey")
          .selectExpr("partitionKey", "id",
                      f"IF({big}, {MiB} - length(partitionKey) - 16 - CAST(id % 16 AS INT), "
                      "CAST(pmod(hash(id), 6000) AS INT)) AS size")
          .selectExpr("partitionKey", "rpad(concat('row-', CAST(id AS STRING), '|'), size + 16, 'x') AS data"))

    _write(df, connector_options(fault_proxy), streamName=stream_name)

    requests = fault_proxy.put_records_requests()
    assert requests
    assert max(r.entry_count for r in requests) <= 500
    assert max(r.total_bytes for r in requests) <= 5 * MiB
    assert any(r.total_bytes > 4 * MiB for r in requests), "runs of near-1 MiB rows should fill calls by bytes"
    records = landed(fault_proxy, stream_name)
    ids = [int(r["data"].split(b"|", 1)[0][4:]) for r in records]
    assert len(ids) == 10_000, f"{len(ids)} records landed for 10,000 rows"
    assert sorted(ids) == list(range(10_000))
    assert max(len(r["data"]) + len(r["partition_key"]) for r in records) > MiB - 32


@pytest.mark.compat
def test_only_throttled_entries_are_retried_and_counted(spark, fault_proxy, stream_name):
    """Done 2 / S2: 20% of entries fail as throttled, at random."""
    create_stream(fault_proxy, stream_name, 2)
    fault_proxy.fail_put_entries(0.2, seed=5)
    n = 3000
    df = spark.range(0, n, 1, 2).selectExpr("CAST(id AS STRING) AS data", "CAST(id % 40 AS STRING) AS partitionKey")

    _write(df, connector_options(fault_proxy), streamName=stream_name)

    metrics = sink_metrics(spark)
    injected = fault_proxy.injected(FAILED_PUT_ENTRIES)
    assert injected > n // 10
    sent = sum(r.entry_count for r in fault_proxy.put_records_requests())
    assert sent == n + injected, "only the failed entries may be sent again"
    assert sorted(int(r["data"]) for r in landed(fault_proxy, stream_name)) == list(range(n))
    assert metrics["Kinesis records retried"] == injected
    assert metrics["Kinesis records throttled"] == injected
    assert metrics["Kinesis records written"] == n
    assert metrics["Kinesis PutRecords calls"] == len(fault_proxy.put_records_requests())


@pytest.mark.compat
def test_per_key_order_survives_partial_failures(spark, fault_proxy, stream_name):
    """Done 3 / S3: ordering=perKey, 30% of entries failed."""
    create_stream(fault_proxy, stream_name, 3)
    fault_proxy.fail_put_entries(0.3, seed=11)
    keys, per_key = 20, 40
    df = spark.range(0, keys * per_key, 1, 1).selectExpr(
        "concat(CAST(id % 20 AS STRING), ':', CAST(id DIV 20 AS STRING)) AS data",
        "CAST(id % 20 AS STRING) AS partitionKey")

    _write(df, connector_options(fault_proxy), streamName=stream_name, ordering="perKey")

    assert fault_proxy.injected(FAILED_PUT_ENTRIES) > 50
    by_key = defaultdict(list)
    for r in landed(fault_proxy, stream_name):  # shard by shard, each in sequence order
        key, seq = r["data"].decode().split(":")
        by_key[key].append(int(seq))
    assert len(by_key) == keys
    for key, seqs in by_key.items():
        assert seqs == list(range(per_key)), f"key {key} landed in the order {seqs}"


def _failure(callable_):
    start = time.monotonic()
    with pytest.raises(Exception) as err:
        callable_()
    return str(err.value), time.monotonic() - start


def test_missing_stream_fails_fast(spark, kinesalite_server):
    """Done 4 / S4."""
    df = spark.createDataFrame([("a", "k")], "data string, partitionKey string")
    message, seconds = _failure(lambda: _write(df, connector_options(kinesalite_server), streamName="missing-stream"))
    assert "[KINESIS_STREAM_NOT_FOUND] Stream 'missing-stream' does not exist" in message
    assert seconds < 60


def test_rejected_credentials_fail_fast(spark, fault_proxy):
    """Done 4 / S4: the service refuses the signature (as AWS does for an unknown access key)."""
    fault_proxy.inject_error("PutRecords", "UnrecognizedClientException", status=400,
                             message="The security token included in the request is invalid.")
    df = spark.createDataFrame([("a", "k")], "data string, partitionKey string")
    message, seconds = _failure(lambda: _write(df, connector_options(fault_proxy), streamName="s"))
    assert "[KINESIS_ACCESS_DENIED] PutRecords on stream 's' was denied" in message
    assert fault_proxy.calls("PutRecords") == 1, "rejected credentials must not be retried"
    assert seconds < 60


def test_oversize_record_fails_with_position_and_size(spark, kinesalite_server, stream_name):
    """Done 4 / S4: a record over 1 MiB (key plus data)."""
    streams.create_stream(streams.client(kinesalite_server), stream_name, 1)
    df = spark.range(0, 5, 1, 1).selectExpr("IF(id = 3, repeat('x', 1048576), 'small') AS data", "'key' AS partitionKey")
    message, _ = _failure(lambda: _write(df, connector_options(kinesalite_server), streamName=stream_name))
    assert "[KINESIS_RECORD_TOO_LARGE] The record at row 3 of partition 0" in message
    assert "is 1048579 bytes (partition key plus data), over the limit of 1048576 bytes" in message


def test_oversize_records_can_be_dropped_and_counted(spark, kinesalite_server, stream_name):
    kinesis = streams.client(kinesalite_server)
    streams.create_stream(kinesis, stream_name, 1)
    df = spark.range(0, 5, 1, 1).selectExpr("IF(id = 3, repeat('x', 1048576), CAST(id AS STRING)) AS data",
                                            "'key' AS partitionKey")
    _write(df, connector_options(kinesalite_server), streamName=stream_name, oversizeRecordAction="drop")
    assert sorted(r["data"] for r in streams.read_all(kinesis, stream_name)) == [b"0", b"1", b"2", b"4"]
    metrics = sink_metrics(spark)
    assert metrics["Kinesis records dropped as oversize"] == 1
    assert metrics["Kinesis records written"] == 4
