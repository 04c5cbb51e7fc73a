"""KPL aggregated records through the streaming source (issue 3, Done when 7).

The aggregates are made by the PyPI package ``aws_kinesis_agg`` (its ``RecordAggregator``) and put with
boto3, never by this project's code: the source must turn each into one row per user record, with the
user record's partition key and data and ``subSequenceNumber`` 0..n-1, exactly once, also when a query
stops and restarts from a checkpoint whose offsets end inside an aggregate.

They are written as the KPL writes them: the user records of one aggregate all hash into the shard the aggregate
is put to (by partition key or by explicit hash key). An aggregate that breaks that rule is read as the KCL reads
it: its user records outside the shard's range are dropped and counted (``dropOutOfRangeSubRecords``, issue 52).
"""

from __future__ import annotations

import hashlib
import sys
from typing import Dict, List, NamedTuple, Optional, Tuple

# aws_kinesis_agg puts its own folder and site-packages at the front of sys.path when imported; undo that
# so it cannot change what later imports (e.g. spark_kinesis) resolve to.
_saved_path = list(sys.path)
try:
    from aws_kinesis_agg.aggregator import RecordAggregator
finally:
    sys.path[:] = _saved_path

from conftest import stream_reader as _reader
from harness import checkpoint as spark_log
from harness import streams
from harness.waiting import QUERY_END_S, wait_for

# Aggregation factors, cycled: 1 (an aggregate of one), small, prime and large ones.
FACTORS = (1, 2, 3, 5, 8, 13, 1, 21, 34, 7, 55, 4, 64, 11)


class UserRecord(NamedTuple):
    data: str
    partition_key: str
    #: Index of the Kinesis record (aggregate or plain record) it was put in, and its place there.
    kinesis_record: int
    sub: int
    aggregated: bool


def _hash_ranges(kinesis, stream: str) -> List[Tuple[int, int]]:
    """The open shards' hash key ranges, in shard order."""
    return [(int(s["HashKeyRange"]["StartingHashKey"]), int(s["HashKeyRange"]["EndingHashKey"]))
            for s in streams.list_shards(kinesis, stream) if "EndingSequenceNumber" not in s["SequenceNumberRange"]]


def _hash_of(partition_key: str) -> int:
    """Where Kinesis routes a partition key: the MD5 of its UTF-8 bytes as a 128-bit unsigned integer."""
    return int.from_bytes(hashlib.md5(partition_key.encode("utf-8")).digest(), "big")


def _make_records(user_count: int, ranges: List[Tuple[int, int]],
                  plain_every: int = 6) -> Tuple[List[dict], List[UserRecord]]:
    """PutRecords entries (aggregates from aws_kinesis_agg, and some plain records between them) and the user
    records they carry, in the order written. Aggregate n goes to shard n % len(ranges), and every user record in
    it hashes into that shard's range, as the KPL makes them."""
    # 41 partition keys per shard: repeated keys, so an aggregate's key table has fewer keys than records.
    keys: List[List[str]] = [[] for _ in ranges]
    candidate = 0
    while min(len(k) for k in keys) < 41:
        key = f"pk-{candidate}"
        candidate += 1
        for shard, (start, end) in enumerate(ranges):
            if start <= _hash_of(key) <= end and len(keys[shard]) < 41:
                keys[shard].append(key)
    entries: List[dict] = []
    expected: List[UserRecord] = []
    made = 0
    plain = 0
    for n, factor in enumerate(FACTORS * 1000):
        if made >= user_count:
            break
        factor = min(factor, user_count - made)
        shard = n % len(ranges)
        start, end = ranges[shard]
        aggregator = RecordAggregator()
        # Every third aggregate routes by explicit hash key (the record's own key table holds it too).
        explicit: Optional[str] = str(start + (n * 7919) % (end - start + 1)) if n % 3 == 2 else None
        for sub in range(factor):
            data = f"user-{made:05d}-" + "x" * (made % 50)
            key = keys[shard][made % len(keys[shard])]
            assert aggregator.add_user_record(key, data, explicit) is None, "aggregate filled up unexpectedly"
            expected.append(UserRecord(data, key, len(entries), sub, True))
            made += 1
        record = aggregator.clear_and_get()
        assert record.get_num_user_records() == factor
        pk, ehk, blob = record.get_contents()
        entry = {"Data": blob, "PartitionKey": pk}
        if ehk:
            entry["ExplicitHashKey"] = ehk
        entries.append(entry)
        if n % plain_every == 0:
            data = f"plain-{plain:04d}"
            expected.append(UserRecord(data, f"plain-key-{plain % 7}", len(entries), 0, False))
            entries.append({"Data": data.encode(), "PartitionKey": f"plain-key-{plain % 7}"})
            plain += 1
    return entries, expected


def _misrouted_aggregate(ranges: List[Tuple[int, int]], count: int) -> Tuple[dict, List[str], List[str]]:
    """One aggregate, put to the first shard by its first key, whose user records' keys hash into every shard (as
    a writer that aggregates without the shard map makes them): the entry, and the data of the user records inside
    and outside the first shard's range."""
    aggregator = RecordAggregator()
    start, end = ranges[0]
    keys = [f"misrouted-{i}" for i in range(10 * count)]
    first = next(k for k in keys if start <= _hash_of(k) <= end)
    inside: List[str] = []
    outside: List[str] = []
    for i, key in enumerate([first] + [k for k in keys if k != first][:count - 1]):
        data = f"misrouted-{i:03d}"
        assert aggregator.add_user_record(key, data) is None
        (inside if start <= _hash_of(key) <= end else outside).append(data)
    pk, _, blob = aggregator.clear_and_get().get_contents()
    return {"Data": blob, "PartitionKey": pk}, inside, outside


class _Row(NamedTuple):
    data: str
    partitionKey: str  # noqa: N815 (the column names)
    shardId: str  # noqa: N815
    sequenceNumber: str  # noqa: N815
    subSequenceNumber: int  # noqa: N815


_COLUMNS = ("CAST(data AS STRING) AS data", "partitionKey", "shardId", "sequenceNumber", "subSequenceNumber")


def _check_rows(rows, expected: List[UserRecord]) -> None:
    """One row per user record, exactly once, with its partition key, data and place in its aggregate."""
    by_data: Dict[str, list] = {}
    for r in rows:
        by_data.setdefault(r.data, []).append(r)
    repeated = {d: len(rs) for d, rs in by_data.items() if len(rs) > 1}
    assert not repeated, f"{len(repeated)} user records delivered more than once, e.g. {list(repeated.items())[:5]}"
    missing = [u.data for u in expected if u.data not in by_data]
    assert not missing, f"{len(missing)} user records never delivered, e.g. {missing[:5]}"
    unexpected = set(by_data) - {u.data for u in expected}
    assert not unexpected, f"rows nobody wrote: {sorted(unexpected)[:5]}"
    assert len(rows) == len(expected)

    wrong_keys = [(u.data, u.partition_key, by_data[u.data][0].partitionKey)
                  for u in expected if by_data[u.data][0].partitionKey != u.partition_key]
    assert not wrong_keys, f"rows with another record's partition key: {wrong_keys[:5]}"

    # The user records of one Kinesis record share its sequence number and come with sub-sequence numbers
    # 0..n-1 in the order they were aggregated; a plain record has sub-sequence number 0.
    groups: Dict[int, List[UserRecord]] = {}
    for u in expected:
        groups.setdefault(u.kinesis_record, []).append(u)
    for members in groups.values():
        got = [by_data[u.data][0] for u in members]
        assert len({(r.shardId, r.sequenceNumber) for r in got}) == 1, \
            f"user records of one Kinesis record have different sequence numbers: {got}"
        assert [r.subSequenceNumber for r in got] == [u.sub for u in members] == list(range(len(members))), got


def test_kpl_aggregates_come_out_one_row_per_user_record(spark, local_kinesis_server, stream_name, tmp_path):
    kinesis = streams.client(local_kinesis_server)
    streams.create_stream(kinesis, stream_name, 2)
    ranges = _hash_ranges(kinesis, stream_name)
    entries, expected = _make_records(1000, ranges)
    misrouted, inside, outside = _misrouted_aggregate(ranges, 20)
    assert inside and outside, "the misrouted aggregate has user records on both sides of its shard's range"
    streams.put_records(kinesis, stream_name, entries + [misrouted])
    assert len(entries) < len(expected)
    assert {u.sub for u in expected} >= set(range(64)), "the largest aggregate holds 64 user records"

    rows = []
    misrouted_rows = []

    def collect(batch, batch_id):
        for row in batch.selectExpr(*_COLUMNS).collect():
            (misrouted_rows if row.data.startswith("misrouted-") else rows).append(row)

    df = _reader(spark, local_kinesis_server, stream_name, initialPosition="trim_horizon")
    query = (df.writeStream.foreachBatch(collect).option("checkpointLocation", str(tmp_path / "cp"))
             .trigger(availableNow=True).start())
    try:
        assert query.awaitTermination(QUERY_END_S), "AvailableNow query did not finish"
        assert query.exception() is None, query.exception()
    finally:
        query.stop()
    _check_rows(rows, expected)
    # The misrouted aggregate's user records outside its shard are dropped, as the KCL drops them, and counted.
    assert sorted(r.data for r in misrouted_rows) == sorted(inside)
    assert sum(p["numInputRows"] for p in query.recentProgress) == len(expected) + len(inside)
    dropped = [int(s["metrics"]["droppedSubRecords"]) for s in (p["sources"][0] for p in query.recentProgress)
               if s.get("metrics", {}).get("droppedSubRecords") is not None]
    assert dropped and dropped[-1] == len(outside), dropped


def test_kpl_restart_inside_an_aggregate_neither_repeats_nor_skips(spark, kinesalite_server, stream_name, tmp_path):
    kinesis = streams.client(kinesalite_server)
    streams.create_stream(kinesis, stream_name, 2)
    entries, expected = _make_records(1000, _hash_ranges(kinesis, stream_name))
    streams.put_records(kinesis, stream_name, entries)
    checkpoint = str(tmp_path / "cp")
    # 97 rows per batch (over two shards): batch ends fall inside aggregates, not on their boundaries.
    limit = 97
    delivered: Dict[int, list] = {}  # batch id -> rows; a batch run again must bring the same rows
    replays = []

    def collect(batch, batch_id):
        got = sorted(tuple(r) for r in batch.selectExpr(*_COLUMNS).collect())
        if batch_id in delivered:
            replays.append(batch_id)
            assert got == delivered[batch_id], f"batch {batch_id} read different rows when run again"
        delivered[batch_id] = got

    def start(**trigger):
        df = _reader(spark, kinesalite_server, stream_name, initialPosition="trim_horizon",
                     maxRecordsPerTrigger=limit)
        return (df.writeStream.foreachBatch(collect).option("checkpointLocation", checkpoint)
                .trigger(**trigger).start())

    # First run: stop after a few batches are committed.
    query = start(processingTime="0 seconds")
    try:
        wait_for(lambda: len(spark_log.commits(checkpoint)) >= 3 or not query.isActive, 120, "three committed batches")
        assert query.isActive, query.exception()
    finally:
        query.stop()
    first_run = sum(len(rows) for rows in delivered.values())
    assert 0 < first_run < len(expected)

    # The restart starts inside an aggregate: the restarted query reads on from the end of the last batch
    # in the offset log (and re-reads that batch from the end of the one before if it was not committed),
    # and one of those ends is inside an aggregate on some shard.
    ends = spark_log.source_offsets(checkpoint)
    last = max(ends)
    inside = [(b, shard) for b in (last - 1, last) if b in ends for shards in ends[b]["streams"].values()
              for shard, pos in shards.items() if pos.get("lastSub") is False]
    assert inside, f"the restart does not start inside an aggregate; offsets: {ends}"

    # Second run from the same checkpoint reads the rest and stops.
    query = start(availableNow=True)
    try:
        assert query.awaitTermination(QUERY_END_S), "AvailableNow restart did not finish"
        assert query.exception() is None, query.exception()
    finally:
        query.stop()

    rows = [_Row(*r) for b in sorted(delivered) for r in delivered[b]]
    _check_rows(rows, expected)
    print(f"first run {first_run} rows; restarted inside an aggregate at {inside[:3]}; "
          f"{len(delivered)} batches, replayed {replays}")
