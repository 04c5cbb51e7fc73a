"""Streaming source under an idle stream, throttling and expired iterators (issue 3, Done when 5 and 6).

Every call the connector makes goes through ``FaultProxy`` (tests/harness/fault_proxy.py) in front of
kinesalite: the proxy counts GetRecords calls per shard and injects the faults. Records are written
straight to kinesalite (``fault_proxy.upstream_endpoint``), so the proxy sees only the connector.
"""

from __future__ import annotations

import time
from collections import Counter

from conftest import stream_reader as _reader
from harness import checkpoint as spark_log
from harness import streams
from harness.waiting import QUERY_END_S, wait_for
from harness.fault_fixtures import fault_proxy  # noqa: F401 (pytest fixture)
from harness.fault_proxy import EXPIRED_ITERATOR, THROTTLED_GET_RECORDS, UNKNOWN_SHARD

IDLE_WINDOW_S = 30.0
IDLE_FETCH_PERIOD_S = 2.0
# Slack over IDLE_WINDOW_S / IDLE_FETCH_PERIOD_S calls per shard: a call already due when the window
# opens, one landing right at its end, and some jitter in when prefetch rounds run.
IDLE_CALL_SLACK = 3


def test_concurrent_prefetch_tasks_finish(spark, fault_proxy, stream_name, tmp_path):  # noqa: F811
    """Several prefetch tasks at once (one per shard, two task slots) with full GetRecords pages, so
    each task reads on while the others are busy: every round must finish. A prefetch task that never
    ends stalls the query in "Getting offsets" and takes a task slot away from the whole session."""
    shards = 6
    kinesis = streams.client(fault_proxy.upstream_endpoint)
    streams.create_stream(kinesis, stream_name, shards)
    written = [(f"c-{i:04d}", f"key-{i}") for i in range(600)]
    streams.put_records(kinesis, stream_name, written)
    rows = []

    def collect(batch, batch_id):
        rows.extend(r.data for r in batch.selectExpr("CAST(data AS STRING) AS data").collect())

    df = _reader(spark, fault_proxy, stream_name, initialPosition="trim_horizon", maxRecordsPerFetch=10,
                 maxRecordsPerTrigger=120)
    query = (df.writeStream.foreachBatch(collect).option("checkpointLocation", str(tmp_path / "cp"))
             .trigger(availableNow=True).start())
    try:
        finished = query.awaitTermination(QUERY_END_S)
        assert finished, (f"the query did not finish in {QUERY_END_S} s; it is at {query.status['message']!r} with "
                          f"{len(rows)} rows read (a stuck prefetch round: `jstack` the driver for a deadlock)")
        assert query.exception() is None, query.exception()
    finally:
        query.stop()
    assert sorted(rows) == sorted(d for d, _ in written)
    # Every shard was read through the proxy in pages of 10: several calls each, 60 at least in all.
    by_shard = {s: n for (st, s), n in fault_proxy.get_records_calls_by_shard().items() if st == stream_name}
    assert len(by_shard) == shards and min(by_shard.values()) > 1, by_shard
    assert sum(by_shard.values()) >= len(written) // 10, by_shard


def test_idle_stream_runs_no_batch_and_polls_each_shard_at_the_idle_period(
        spark, fault_proxy, stream_name, tmp_path):  # noqa: F811
    shard_count = 3
    kinesis = streams.client(fault_proxy.upstream_endpoint)
    streams.create_stream(kinesis, stream_name, shard_count)
    checkpoint = str(tmp_path / "cp")
    batches = []  # (batch_id, rows)

    def collect(batch, batch_id):
        batches.append((batch_id, [r.data for r in batch.selectExpr("CAST(data AS STRING) AS data").collect()]))

    # trim_horizon on an empty stream: kinesalite never answers GetShardIterator AT_TIMESTAMP on a shard
    # with no record after the timestamp, and `latest` is pinned as AT_TIMESTAMP.
    df = _reader(spark, fault_proxy, stream_name, initialPosition="trim_horizon",
                 idleFetchPeriod=f"{int(IDLE_FETCH_PERIOD_S)}s")
    query = df.writeStream.foreachBatch(collect).option("checkpointLocation", checkpoint).start()
    try:
        # Running: the first batch (Spark always plans one from the initial offset) is done and every
        # shard has been polled at least once, so the query is in its steady idle state.
        wait_for(lambda: query.lastProgress is not None or not query.isActive, 90, "the query's first batch")
        assert query.isActive, query.exception()

        def polled_every_shard():
            by_shard = fault_proxy.get_records_calls_by_shard()
            return sum(1 for (s, _), n in by_shard.items() if s == stream_name and n > 0) == shard_count

        wait_for(polled_every_shard, 30, "a GetRecords call on every shard")
        rows_before = sum(len(rows) for _, rows in batches)
        assert rows_before == 0, batches
        batch_id_before = query.lastProgress["batchId"]
        offsets_before = spark_log.offset_batches(checkpoint)
        commits_before = spark_log.commits(checkpoint)
        assert offsets_before, "the first batch is in the offset log"
        calls_before = fault_proxy.get_records_calls_by_shard()
        started = time.monotonic()

        time.sleep(IDLE_WINDOW_S)  # idleness is the point: the one fixed wait of these suites

        elapsed = time.monotonic() - started
        calls_after = fault_proxy.get_records_calls_by_shard()
        assert query.isActive, query.exception()
        # No batch ran in the idle window: nothing new in the offset log, no new batch id, no rows.
        assert spark_log.offset_batches(checkpoint) == offsets_before
        assert spark_log.commits(checkpoint) == commits_before
        # Spark's idle progress events (every 10 s without data) carry the id of the batch that would
        # run next, so an idle query shows at most the last planned batch id + 1.
        ids = [p["batchId"] for p in query.recentProgress]
        assert max(ids) <= max(batch_id_before, offsets_before[-1] + 1), (ids, offsets_before)
        assert all(p["numInputRows"] == 0 for p in query.recentProgress), \
            [(p["batchId"], p["numInputRows"]) for p in query.recentProgress]
        assert sum(len(rows) for _, rows in batches) == 0, batches

        # At most one GetRecords call per shard per idleFetchPeriod (+ slack), and no call the proxy
        # could not attribute to a shard of this stream.
        limit = int(elapsed / IDLE_FETCH_PERIOD_S) + IDLE_CALL_SLACK
        window = {shard: calls_after.get(shard, 0) - calls_before.get(shard, 0)
                  for shard in calls_after if shard[0] == stream_name}
        assert len(window) == shard_count, calls_after
        assert calls_after.get(UNKNOWN_SHARD, 0) == calls_before.get(UNKNOWN_SHARD, 0), calls_after
        assert all(n <= limit for n in window.values()), (window, limit, elapsed)
        # ...and the shards are still being watched (a record written now would be seen).
        assert all(n >= 1 for n in window.values()), window

        # The query was alive all along: records written now arrive.
        new = [(f"late-{i}", f"k{i}") for i in range(20)]
        streams.put_records(kinesis, stream_name, new)
        wait_for(lambda: sum(len(rows) for _, rows in batches) >= len(new) or not query.isActive, 60,
               "the records written after the idle window")
        assert query.isActive, query.exception()
        assert sorted(d for _, rows in batches for d in rows) == sorted(d for d, _ in new)
        print(f"idle window {elapsed:.1f} s: GetRecords per shard {sorted(window.values())}, limit {limit}")
    finally:
        query.stop()


def test_throttling_and_expired_iterators_lose_and_repeat_nothing(
        spark, fault_proxy, stream_name, tmp_path):  # noqa: F811
    kinesis = streams.client(fault_proxy.upstream_endpoint)
    streams.create_stream(kinesis, stream_name, 3)
    written = [(f"id-{i:05d}", f"key-{i % 37}") for i in range(3000)]
    streams.put_records(kinesis, stream_name, written)

    # Throttle first: the rules are consulted in order, so every 5th call that gets past the throttle
    # rule finds its iterator expired.
    fault_proxy.throttle_get_records(0.3, seed=11)
    fault_proxy.expire_iterator_every(5)

    batches = []

    def collect(batch, batch_id):
        batches.append(batch.selectExpr("CAST(data AS STRING) AS data", "partitionKey", "shardId",
                                        "sequenceNumber").collect())

    # Small pages so each shard takes many GetRecords calls, hence many faults.
    df = _reader(spark, fault_proxy, stream_name, initialPosition="trim_horizon", maxRecordsPerFetch=100,
                 maxRecordsPerTrigger=1000)
    query = (df.writeStream.foreachBatch(collect).option("checkpointLocation", str(tmp_path / "cp"))
             .trigger(availableNow=True).start())
    try:
        assert query.awaitTermination(QUERY_END_S), "AvailableNow query did not finish"
        assert query.exception() is None, query.exception()
        rows = [r for b in batches for r in b]
        got = Counter((r.data, r.partitionKey) for r in rows)
        duplicates = {k: n for k, n in got.items() if n > 1}
        assert not duplicates, f"{len(duplicates)} records delivered more than once, e.g. {list(duplicates)[:5]}"
        assert len(rows) == len(written)
        assert set(got) == set(written)
        # Within each shard, records come out in sequence order.
        by_shard = {}
        for r in rows:
            by_shard.setdefault(r.shardId, []).append(int(r.sequenceNumber))
        assert all(seqs == sorted(seqs) for seqs in by_shard.values())

        throttled = fault_proxy.injected(THROTTLED_GET_RECORDS)
        expired = fault_proxy.injected(EXPIRED_ITERATOR)
        assert throttled > 0 and expired > 0, fault_proxy.injected_counts()
        metrics = query.lastProgress["sources"][0]["metrics"]
        # The metrics are those of the last batch's progress. After it, AvailableNow asks once more whether anything
        # is left, and that last look may call GetRecords on a shard (and be throttled) with no progress to report
        # it: the proxy's counts, read after the query ended, may exceed the metrics by that look, at most one call
        # and one retry a shard. A client retrying behind the connector's back would hide far more: about one
        # call in three is throttled here.
        slack = 2 * 3
        counted_throttled, counted_calls = int(metrics["throttledCalls"]), int(metrics["getRecordsCalls"])
        # Every throttled answer the connector got is counted in the metric (and nothing else is).
        assert counted_throttled <= throttled <= counted_throttled + slack, (
            f"throttledCalls={metrics['throttledCalls']} but the proxy throttled {throttled} GetRecords calls "
            f"(getRecordsCalls={metrics['getRecordsCalls']}, GetRecords through the proxy: "
            f"{fault_proxy.calls('GetRecords')})")
        # ...because every GetRecords request is made (and counted) by the connector itself: the client
        # does not retry throttled calls behind its back, outside the per-shard pacing.
        assert counted_calls <= fault_proxy.calls("GetRecords") <= counted_calls + slack, metrics
        print(f"{len(rows)} rows in {len(batches)} batches; injected throttles {throttled}, expired {expired}; "
              f"metrics throttledCalls={metrics['throttledCalls']} getRecordsCalls={metrics['getRecordsCalls']} "
              f"proxy GetRecords={fault_proxy.calls('GetRecords')}")
    finally:
        query.stop()
