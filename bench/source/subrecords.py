#!/usr/bin/env python3
"""What reading KPL aggregates as the KCL does costs (issue 52; not part of CI; docs/performance.md, "KPL aggregates").

A 4-shard kinesalite stream is filled with KPL aggregates as the KPL writes them (`aws_kinesis_agg`, every user
record's partition key hashing into the shard its aggregate goes to), then drained by a streaming query with
`Trigger.AvailableNow` into the `noop` sink, with `dropOutOfRangeSubRecords` on (the default: the MD5 of every user
record's partition key checked against its shard's hash range) and off, in turns. Each run is timed from `start()` to
termination; the ratio of the two is what the check costs.

    make bench-subrecords            # = .venv/bin/python bench/source/subrecords.py
    .venv/bin/python bench/source/subrecords.py [--records 2000000] [--per-aggregate 100] [--repeat 4]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import uuid

from common import drain, kinesalite, spark_session, write_results
from harness import streams

# aws_kinesis_agg puts its own folder first on sys.path when imported; undo that (as tests/test_streaming_kpl.py does).
_saved_path = list(sys.path)
try:
    from aws_kinesis_agg.aggregator import RecordAggregator
finally:
    sys.path[:] = _saved_path


def _hash(key: str) -> int:
    return int.from_bytes(hashlib.md5(key.encode("utf-8")).digest(), "big")


def fill(kinesis, stream: str, records: int, per_aggregate: int, size: int) -> None:
    """`records` user records of `size` bytes in aggregates of `per_aggregate`, aggregate n to shard n % shards, each
    user record's key hashing into that shard's range (as the KPL packs them)."""
    ranges = [(int(s["HashKeyRange"]["StartingHashKey"]), int(s["HashKeyRange"]["EndingHashKey"]))
              for s in streams.list_shards(kinesis, stream)]
    keys: list[list[str]] = [[] for _ in ranges]
    candidate = 0
    while min(len(k) for k in keys) < 256:
        key = f"k{candidate}"
        candidate += 1
        for shard, (start, end) in enumerate(ranges):
            if start <= _hash(key) <= end and len(keys[shard]) < 256:
                keys[shard].append(key)
    payload = "x" * size
    batch: list[dict] = []
    made = 0
    n = 0
    while made < records:
        shard = n % len(ranges)
        aggregator = RecordAggregator()
        for i in range(min(per_aggregate, records - made)):
            aggregator.add_user_record(keys[shard][(made + i) % len(keys[shard])], payload)
        count = min(per_aggregate, records - made)
        made += count
        n += 1
        pk, ehk, blob = aggregator.clear_and_get().get_contents()
        entry = {"Data": blob, "PartitionKey": pk}
        if ehk:
            entry["ExplicitHashKey"] = ehk
        batch.append(entry)
        if sum(len(e["Data"]) for e in batch) > 4 * 1024 * 1024 or len(batch) == 500:
            streams.put_records(kinesis, stream, batch)
            batch = []
    if batch:
        streams.put_records(kinesis, stream, batch)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=2_000_000, help="user records")
    parser.add_argument("--per-aggregate", type=int, default=100)
    parser.add_argument("--size", type=int, default=100, help="bytes of each user record's data")
    parser.add_argument("--repeat", type=int, default=4, help="pairs of runs (check on, check off)")
    args = parser.parse_args()
    spark = spark_session("subrecords-bench")
    rows = []
    with kinesalite() as (server, kinesis):
        stream = f"bench-kpl-{uuid.uuid4().hex[:8]}"
        streams.create_stream(kinesis, stream, 4)
        fill(kinesis, stream, args.records, args.per_aggregate, args.size)
        drain(spark, server.endpoint, stream, args.records, dropOutOfRangeSubRecords="true")  # warm-up: not counted
        for run in range(args.repeat):
            # Alternate which setting goes first: the local server's speed drifts within a session.
            order = (True, False) if run % 2 == 0 else (False, True)
            row: dict = {"run": run, "records": args.records, "perAggregate": args.per_aggregate}
            for drop in order:
                row["checked" if drop else "unchecked"] = round(
                    drain(spark, server.endpoint, stream, args.records, dropOutOfRangeSubRecords=str(drop).lower()))
            row["ratio"] = round(row["checked"] / row["unchecked"], 3)
            print(json.dumps(row), flush=True)
            rows.append(row)
    spark.stop()
    summary = {"runs": len(rows), "medianRatio": round(statistics.median(r["ratio"] for r in rows), 3),
               "checked": [r["checked"] for r in rows], "unchecked": [r["unchecked"] for r in rows]}
    print(json.dumps({"summary": summary}), flush=True)
    write_results("bench-subrecords", {"runs": rows, "summary": summary})


if __name__ == "__main__":
    main()
