"""Records trimmed by retention before the query read them (issue 3, `failOnDataLoss`; issue 4, trimmed shards).

No local server trims records, so ``FaultProxy.trim`` (tests/harness/fault_proxy.py) plays the service's part in
front of kinesalite: sequence numbers up to the trim point are refused by GetShardIterator, TRIM_HORIZON starts
after them and GetRecords leaves them out. Records are written straight to kinesalite; the query reads through
the proxy. The query stops between the first and the later runs, as a job stopped for longer than the stream's
retention would.
"""

from __future__ import annotations

from pyspark.errors import StreamingQueryException

from conftest import stream_reader
from harness import streams
from harness.fault_fixtures import fault_proxy  # noqa: F401 (pytest fixture)
from harness.fault_proxy import TRIMMED_POSITION

SHARD = "shardId-000000000000"


def _run(spark, proxy, stream, checkpoint, rows, **options):
    """One AvailableNow run of the query on `stream` through `proxy`; returns the finished query."""
    def collect(batch, batch_id):
        rows.extend(r.data for r in batch.selectExpr("CAST(data AS STRING) AS data").collect())

    df = stream_reader(spark, proxy, stream, initialPosition="trim_horizon", **options)
    query = (df.writeStream.foreachBatch(collect).option("checkpointLocation", checkpoint)
             .trigger(availableNow=True).start())
    try:
        try:
            finished = query.awaitTermination(120)
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
