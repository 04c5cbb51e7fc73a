"""Records trimmed by retention before the query read them (issue 3, `failOnDataLoss`; issue 4, trimmed shards).

No local server trims records, so ``FaultProxy.trim`` (tests/harness/fault_proxy.py) plays the service's part in
front of kinesalite: sequence numbers up to the trim point are refused by GetShardIterator, TRIM_HORIZON starts
after them and GetRecords leaves them out. Records are written straight to kinesalite; the query reads through
the proxy. The query stops between the first and the later runs, as a job stopped for longer than the stream's
retention would.
"""

from __future__ import annotations

from pyspark.errors import StreamingQueryException

import pytest

from conftest import stream_reader
from harness import checkpoint as cp
from harness import streams
from harness.fault_fixtures import fault_proxy  # noqa: F401 (pytest fixture)
from harness.fault_proxy import TRIMMED_ITERATOR, TRIMMED_POSITION
from harness.waiting import QUERY_END_S, wait_for

SHARD = "shardId-000000000000"
OTHER_SHARD = "shardId-000000000001"


def _run(spark, proxy, stream, checkpoint, rows, **options):
    """One AvailableNow run of the query on `stream` through `proxy`; returns the finished query."""
    def collect(batch, batch_id):
        rows.extend(r.data for r in batch.selectExpr("CAST(data AS STRING) AS data").collect())

    df = stream_reader(spark, proxy, stream, initialPosition="trim_horizon", **options)
    query = (df.writeStream.foreachBatch(collect).option("checkpointLocation", checkpoint)
             .trigger(availableNow=True).start())
    try:
        try:
            finished = query.awaitTermination(QUERY_END_S)
        except StreamingQueryException:
            finished = True  # failed: the caller looks at query.exception()
        assert finished, f"the query did not finish; it is at {query.status['message']!r}"
    finally:
        query.stop()
    return query


def test_a_position_trimmed_by_retention_fails_the_query_or_is_skipped_and_counted(
        spark, fault_proxy, stream_name, tmp_path):  # noqa: F811
    kinesis = streams.client(fault_proxy.upstream_endpoint)
    streams.create_stream(kinesis, stream_name, 1)
    checkpoint = str(tmp_path / "cp")
    first = [f"r-{i:03d}" for i in range(40)]
    streams.put_records(kinesis, stream_name, [(d, "k") for d in first])
    rows: list = []
    assert _run(spark, fault_proxy, stream_name, checkpoint, rows).exception() is None
    assert rows == first

    # While the query is stopped, 60 more records arrive and retention trims everything up to r-069.
    later = [f"r-{i:03d}" for i in range(40, 100)]
    sequences = streams.put_records(kinesis, stream_name, [(d, "k") for d in later])
    fault_proxy.trim(stream_name, SHARD, sequences[later.index("r-069")]["SequenceNumber"])

    # failOnDataLoss=true (the default): the restart fails, names the shard and the way out, and reads nothing.
    failed = _run(spark, fault_proxy, stream_name, checkpoint, rows)
    error = str(failed.exception())
    assert "[KINESIS_DATA_LOSS]" in error, error
    assert f"shard {SHARD} of stream '{stream_name}'" in error, error
    assert "failOnDataLoss=false" in error, error
    assert fault_proxy.injected(TRIMMED_POSITION) >= 1
    assert rows == first, "a query that fails on data loss must not deliver anything past the gap"

    # failOnDataLoss=false: the same checkpoint goes on from the oldest record left, each exactly once.
    query = _run(spark, fault_proxy, stream_name, checkpoint, rows, failOnDataLoss="false")
    assert query.exception() is None, query.exception()
    assert rows == first + [f"r-{i:03d}" for i in range(70, 100)]
    metrics = [p["sources"][0]["metrics"] for p in query.recentProgress if p["numInputRows"] > 0]
    assert metrics and int(metrics[-1]["dataLoss"]) == 1, metrics


def _data_loss_metrics(query) -> list:
    return [int(p["sources"][0]["metrics"]["dataLoss"]) for p in query.recentProgress]


@pytest.mark.parametrize("fail_on_data_loss", [True, False], ids=["fail", "skip"])
def test_a_live_iterator_trimmed_while_the_query_runs_fails_the_query_or_is_skipped_and_counted(
        spark, fault_proxy, stream_name, tmp_path, fail_on_data_loss):  # noqa: F811
    kinesis = streams.client(fault_proxy.upstream_endpoint)
    streams.create_stream(kinesis, stream_name, 1)
    first = [f"r-{i:03d}" for i in range(40)]
    written = streams.put_records(kinesis, stream_name, [(d, "k") for d in first])
    rows: list = []

    def collect(batch, batch_id):
        rows.extend(r.data for r in batch.selectExpr("CAST(data AS STRING) AS data").collect())

    df = stream_reader(spark, fault_proxy, stream_name, initialPosition="trim_horizon",
                       failOnDataLoss=str(fail_on_data_loss).lower())
    query = (df.writeStream.foreachBatch(collect).option("checkpointLocation", str(tmp_path / "cp"))
             .trigger(processingTime="500 milliseconds").start())
    try:
        wait_for(lambda: rows == first, 60, "the first 40 records", context=lambda: f"rows: {rows[-3:]}")
        # The query holds an iterator after r-039. Its reads are held back (throttled) while 60 more records
        # arrive and retention trims everything up to r-069: the iterator's position is now trimmed.
        fault_proxy.throttle_get_records(1.0)
        later = [f"r-{i:03d}" for i in range(40, 100)]
        sequences = streams.put_records(kinesis, stream_name, [(d, "k") for d in later])
        fault_proxy.trim(stream_name, SHARD, sequences[later.index("r-069")]["SequenceNumber"])
        fault_proxy.throttle_get_records(0)

        if fail_on_data_loss:
            wait_for(lambda: not query.isActive, 60, "the query to fail on the trimmed iterator",
                     context=lambda: f"status: {query.status}, rows: {len(rows)} {fault_proxy.injected_counts()} {fault_proxy.calls_by_operation()} {fault_proxy.get_records_calls_by_shard()}")
            error = str(query.exception())
            assert "[KINESIS_DATA_LOSS]" in error, error
            assert f"shard {SHARD} of stream '{stream_name}'" in error, error
            assert f"after sequence number {written[-1]['SequenceNumber']}" in error, error
            assert rows == first, "a query that fails on data loss must not deliver anything past the gap"
        else:
            expected = first + [f"r-{i:03d}" for i in range(70, 100)]
            wait_for(lambda: len(rows) >= len(expected), 60, "the records after the trim point",
                     context=lambda: f"rows: {len(rows)}, status: {query.status}, exception: {query.exception()}")
            assert rows == expected
            wait_for(lambda: 1 in _data_loss_metrics(query), 30, "the dataLoss metric",
                     context=lambda: str(_data_loss_metrics(query)))
            assert max(_data_loss_metrics(query)) == 1
        assert fault_proxy.injected(TRIMMED_ITERATOR) >= 1
    finally:
        query.stop()


def test_a_replayed_batch_begun_at_trim_horizon_whose_head_was_trimmed_fails_or_is_counted(
        spark, fault_proxy, stream_name, tmp_path):  # noqa: F811
    kinesis = streams.client(fault_proxy.upstream_endpoint)
    streams.create_stream(kinesis, stream_name, 1)
    checkpoint = str(tmp_path / "cp")
    first = [f"r-{i:03d}" for i in range(40)]
    sequences = streams.put_records(kinesis, stream_name, [(d, "k") for d in first])

    # Batch 0 (trim horizon up to r-039) is planned and logged, then the run dies before committing it.
    def crash(batch, batch_id):
        raise RuntimeError("the driver died before the batch was committed")

    df = stream_reader(spark, fault_proxy, stream_name, initialPosition="trim_horizon")
    crashed = (df.writeStream.foreachBatch(crash).option("checkpointLocation", checkpoint)
               .trigger(availableNow=True).start())
    try:
        with pytest.raises(Exception):
            crashed.awaitTermination(QUERY_END_S)
    finally:
        crashed.stop()
    assert cp.offset_batches(checkpoint) == [0] and cp.commits(checkpoint) == []

    # Retention trims r-000..r-019 before the restart replays batch 0.
    fault_proxy.trim(stream_name, SHARD, sequences[19]["SequenceNumber"])
    rows: list = []
    failed = _run(spark, fault_proxy, stream_name, checkpoint, rows)
    error = str(failed.exception())
    assert "[KINESIS_DATA_LOSS]" in error, error
    assert f"shard {SHARD} of stream '{stream_name}'" in error, error
    assert f"sequence number {sequences[0]['SequenceNumber']}" in error, error
    assert rows == [], "a replay that fails on data loss must deliver nothing"
    # How it knows: the offset log pinned the first record of the range that began at trim horizon.
    planned = cp.source_offset(checkpoint, 0)["streams"][stream_name][SHARD]
    assert planned.get("first") == sequences[0]["SequenceNumber"], planned

    # failOnDataLoss=false: the replay delivers what is left of the batch and counts the loss.
    query = _run(spark, fault_proxy, stream_name, checkpoint, rows, failOnDataLoss="false")
    assert query.exception() is None, query.exception()
    assert rows == first[20:]
    assert _data_loss_metrics(query)[:1] == [1], _data_loss_metrics(query)


def test_a_shard_gone_from_a_stream_that_exists_is_data_loss_not_stream_not_found(
        spark, fault_proxy, stream_name, tmp_path):  # noqa: F811
    kinesis = streams.client(fault_proxy.upstream_endpoint)
    streams.create_stream(kinesis, stream_name, 2)
    checkpoint = str(tmp_path / "cp")
    low, high = "0", str(2 ** 127)  # explicit hash keys: one in each shard

    def put(prefix):
        records = [(f"{prefix}-a-{i:02d}", "k", low) for i in range(10)] + \
            [(f"{prefix}-b-{i:02d}", "k", high) for i in range(10)]
        landed = streams.put_records(kinesis, stream_name, records)
        assert [r["ShardId"] for r in landed] == [SHARD] * 10 + [OTHER_SHARD] * 10
        return [r[0] for r in records]

    first = put("one")
    rows: list = []
    assert _run(spark, fault_proxy, stream_name, checkpoint, rows).exception() is None
    assert sorted(rows) == sorted(first)

    # More records arrive; then the service no longer knows shard 0 (deleted past retention), while the stream,
    # its listing and shard 1 still answer.
    later = put("two")
    for operation in ("GetShardIterator", "GetRecords"):
        fault_proxy.inject_error(operation, "ResourceNotFoundException", shard=(stream_name, SHARD),
                                 message=f"Shard {SHARD} in stream {stream_name} under account 000000000000 "
                                         "does not exist")

    failed = _run(spark, fault_proxy, stream_name, checkpoint, rows)
    error = str(failed.exception())
    assert "[KINESIS_DATA_LOSS]" in error and "[KINESIS_STREAM_NOT_FOUND]" not in error, error
    assert f"shard {SHARD} of stream '{stream_name}'" in error and "no longer exists" in error, error
    assert sorted(rows) == sorted(first)

    # failOnDataLoss=false: shard 0 is taken as ended (its unread records are lost, and counted); shard 1 goes on.
    query = _run(spark, fault_proxy, stream_name, checkpoint, rows, failOnDataLoss="false")
    assert query.exception() is None, query.exception()
    assert sorted(rows) == sorted(first + [d for d in later if "-b-" in d])
    assert max(_data_loss_metrics(query)) == 1, _data_loss_metrics(query)
    last = cp.last_batch(str(tmp_path / "cp" / "offsets"))
    assert cp.is_ended(cp.shard_positions(checkpoint, last, stream_name)[SHARD])
