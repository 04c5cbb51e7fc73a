"""`initialShardPositions`: a new query starts in chosen shards at or after given sequence numbers (issue 3).

For example to take over from another consumer's checkpoint. Records are written with boto3; the expected rows
come from the sequence numbers PutRecords returned, not from the connector.
"""

from __future__ import annotations

import json

import pytest

from conftest import connector_options, stream_reader
from harness import streams
from harness.waiting import QUERY_END_S


def _write(kinesis, stream):
    """40 records over 2 shards (explicit hash keys at each shard's low end); (data, shard, seq) each."""
    shards = streams.list_shards(kinesis, stream)
    records = [(f"r-{i:02d}", f"k{i}", shards[i % 2]["HashKeyRange"]["StartingHashKey"]) for i in range(40)]
    results = streams.put_records(kinesis, stream, records)
    return [(data, r["ShardId"], r["SequenceNumber"]) for (data, _, _), r in zip(records, results)]


def _positions_and_expected(written):
    """Shard 0 resumes after its 5th record, shard 1 starts at its 3rd; the rows each should deliver."""
    by_shard = {}
    for data, shard, seq in written:
        by_shard.setdefault(shard, []).append((data, seq))
    (s0, recs0), (s1, recs1) = sorted(by_shard.items())
    positions = {s0: recs0[4][1], s1: {"at": recs1[2][1]}}
    expected = sorted([d for d, _ in recs0[5:]] + [d for d, _ in recs1[2:]])
    return positions, expected


def test_a_streaming_query_starts_after_or_at_the_given_sequence_numbers(spark, kinesalite_server, stream_name,
                                                                        tmp_path):
    kinesis = streams.client(kinesalite_server)
    streams.create_stream(kinesis, stream_name, 2)
    positions, expected = _positions_and_expected(_write(kinesis, stream_name))
    rows = []

    def collect(batch, batch_id):
        rows.extend(r.data for r in batch.selectExpr("CAST(data AS STRING) AS data").collect())

    df = stream_reader(spark, kinesalite_server, stream_name, initialPosition="trim_horizon",
                       initialShardPositions=json.dumps({stream_name: positions}))
    query = (df.writeStream.foreachBatch(collect).option("checkpointLocation", str(tmp_path / "cp"))
             .trigger(availableNow=True).start())
    try:
        assert query.awaitTermination(QUERY_END_S), query.status
        assert query.exception() is None, query.exception()
    finally:
        query.stop()
    assert sorted(rows) == expected


def test_a_batch_read_honours_them_and_an_unknown_shard_is_an_error(spark, kinesalite_server, stream_name):
    kinesis = streams.client(kinesalite_server)
    streams.create_stream(kinesis, stream_name, 2)
    positions, expected = _positions_and_expected(_write(kinesis, stream_name))
    options = dict(connector_options(kinesalite_server), streamName=stream_name)
    df = spark.read.format("kinesis").options(**options) \
        .option("initialShardPositions", json.dumps({stream_name: positions})).load()
    assert sorted(r.data for r in df.selectExpr("CAST(data AS STRING) AS data").collect()) == expected

    unknown = json.dumps({stream_name: {"shardId-000000000007": "1"}})
    with pytest.raises(Exception) as error:
        spark.read.format("kinesis").options(**options).option("initialShardPositions", unknown).load().collect()
    message = str(error.value)
    assert "[KINESIS_INVALID_OPTION_VALUE] Option 'initialShardPositions'" in message, message
    assert f"'{stream_name}/shardId-000000000007'" in message, message
