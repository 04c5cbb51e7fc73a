"""``aggregation=kpl``: the sink's aggregated records, read back by aws-kinesis-agg and by our own source.

Issue 5, "Done when" 6. aws-kinesis-agg is the reference KPL de-aggregator written by others: reading our
output with it checks the format against code this project did not write.
"""

from __future__ import annotations

import base64

from conftest import connector_options
from harness import ordering, streams
from harness.waiting import QUERY_END_S

N = 4000


def _rows(spark):
    return spark.range(0, N, 1, 2).selectExpr(
        "concat('user-', CAST(id AS STRING), '-', repeat('p', CAST(id % 300 AS INT))) AS data",
        "concat('key-', CAST(id % 500 AS STRING)) AS partitionKey")


def _expected():
    return sorted((f"user-{i}-" + "p" * (i % 300), f"key-{i % 500}") for i in range(N))


def test_aggregated_output_is_read_record_by_record(spark, local_kinesis_server, stream_name, tmp_path):
    kinesis = streams.client(local_kinesis_server)
    streams.create_stream(kinesis, stream_name, 3)
    options = connector_options(local_kinesis_server)

    _rows(spark).write.format("kinesis").options(**options, streamName=stream_name, aggregation="kpl") \
        .mode("append").save()

    raw = streams.read_all(kinesis, stream_name)
    assert len(raw) < N // 20, f"{len(raw)} Kinesis records for {N} rows: not aggregated"
    assert max(len(r["data"]) + len(r["partition_key"]) for r in raw) <= 50 * 1024

    # aws-kinesis-agg: every user record once, each in the shard its own key hashes to.
    ranges = {s["ShardId"]: (int(s["HashKeyRange"]["StartingHashKey"]), int(s["HashKeyRange"]["EndingHashKey"]))
              for s in streams.list_shards(kinesis, stream_name)}
    users = []
    for record in raw:
        for user in ordering.user_records(record):
            assert user["kinesis"]["aggregated"] is True
            key = user["kinesis"]["partitionKey"]
            low, high = ranges[record["shard_id"]]
            assert low <= ordering.hash_key(key) <= high, f"{key} was packed into {record['shard_id']}"
            users.append((base64.b64decode(user["kinesis"]["data"]).decode(), key))
    assert sorted(users) == _expected()

    # Our own streaming source de-aggregates too (sub-sequence numbers count records inside an aggregate).
    query = (spark.readStream.format("kinesis")
             .options(**options, streamName=stream_name, initialPosition="trim_horizon").load()
             .selectExpr("CAST(data AS STRING) AS data", "partitionKey", "subSequenceNumber")
             .writeStream.format("memory").queryName("agg_" + stream_name.replace("-", "_"))
             .option("checkpointLocation", str(tmp_path / "checkpoint")).trigger(availableNow=True).start())
    try:
        assert query.awaitTermination(QUERY_END_S), "the AvailableNow query did not finish"
        assert query.exception() is None
        read = spark.table(query.name).collect()
    finally:
        query.stop()
    assert sorted((r.data, r.partitionKey) for r in read) == _expected()
    assert max(r.subSequenceNumber for r in read) > 0
