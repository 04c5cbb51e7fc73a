"""Streaming reads: ranges fixed on the driver, AvailableNow, admission control."""

from __future__ import annotations

import pytest
from conftest import stream_reader as _reader
from harness import streams
from harness.waiting import QUERY_END_S, wait_for


@pytest.mark.compat
@pytest.mark.jar_codecs
def test_available_now_reads_what_was_there_and_stops(spark, local_kinesis_server, stream_name, tmp_path):
    kinesis = streams.client(local_kinesis_server)
    streams.create_stream(kinesis, stream_name, 4)
    before = [(f"before-{i}", f"k{i % 13}") for i in range(2000)]
    streams.put_records(kinesis, stream_name, before)

    df = _reader(spark, local_kinesis_server, stream_name, initialPosition="trim_horizon", maxRecordsPerTrigger=300)
    query = (df.selectExpr("CAST(data AS STRING) AS data").writeStream.format("memory").queryName("an_" + stream_name.replace("-", "_"))
             .option("checkpointLocation", str(tmp_path / "cp")).trigger(availableNow=True).start())
    try:
        # Records written once the query is running are not part of what it was asked to read.
        wait_for(lambda: query.lastProgress is not None or not query.isActive, 120, "first batch")
        streams.put_records(kinesis, stream_name, [(f"after-{i}", "k") for i in range(100)])
        assert query.awaitTermination(QUERY_END_S), "the AvailableNow query was still running"
        assert query.exception() is None
        got = [r.data for r in spark.table(query.name).collect()]
        assert sorted(got) == sorted(d for d, _ in before)
        sizes = [p["numInputRows"] for p in query.recentProgress]
        assert sum(sizes) == len(before)
        assert max(sizes) <= 300, sizes
    finally:
        query.stop()


@pytest.mark.compat
def test_max_bytes_per_trigger_bounds_every_batch(spark, kinesalite_server, stream_name, tmp_path):
    kinesis = streams.client(kinesalite_server)
    streams.create_stream(kinesis, stream_name, 2)
    streams.put_records(kinesis, stream_name, [("x" * 1000, f"k{i}") for i in range(400)])
    df = _reader(spark, kinesalite_server, stream_name, initialPosition="trim_horizon", maxBytesPerTrigger=50_000)
    rows = []

    def collect(batch, batch_id):
        sizes = batch.selectExpr("length(data) + length(partitionKey) AS n").collect()
        rows.append((batch_id, sum(r.n for r in sizes), len(sizes)))

    query = (df.writeStream.foreachBatch(collect).option("checkpointLocation", str(tmp_path / "cp"))
             .trigger(availableNow=True).start())
    assert query.awaitTermination(QUERY_END_S), "the AvailableNow query was still running"
    assert query.exception() is None
    assert sum(n for _, _, n in rows) == 400
    assert all(b <= 50_000 for _, b, _ in rows), rows
