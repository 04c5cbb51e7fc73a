"""Per-key order as other readers see it: a stream read the way the KCL reads it, and the records of each key
compared with the order they had in another stream (tests/test_ordered_realtime.py, bench/realtime/ordered.py).

A KCL-style reader reads a shard's parents before the shard (here: shard-id order, since a child's id always
follows its parents'), de-aggregates KPL records, and drops a sub-record whose key hashes outside the range of
the shard it was read from. The KPL format is read by the PyPI package aws-kinesis-agg, never by this project's
code. Only tests and benchmarks import this module.
"""

from __future__ import annotations

import base64
import hashlib
import sys
from typing import Any, Dict, Iterable, List, Sequence, Tuple

from harness import streams

# aws_kinesis_agg puts its own folder and site-packages at the front of sys.path when imported; undo that so it
# cannot change what later imports resolve to.
_saved_path = list(sys.path)
try:
    from aws_kinesis_agg.aggregator import RecordAggregator
    from aws_kinesis_agg.deaggregator import iter_deaggregate_records
finally:
    sys.path[:] = _saved_path

__all__ = ["aggregate", "hash_key", "lambda_event", "user_records", "key_name", "tick_entries", "read_as_kcl", "by_key",
           "violations"]


def hash_key(partition_key: str) -> int:
    """Where Kinesis places a partition key: the MD5 of its UTF-8 bytes as a 128-bit number."""
    return int.from_bytes(hashlib.md5(partition_key.encode("utf-8")).digest(), "big")


def aggregate(partition_key: str, datas: Sequence[str]) -> Dict[str, Any]:
    """One KPL aggregate of `datas`, all under `partition_key`, as a put_records entry (made by aws-kinesis-agg)."""
    aggregator = RecordAggregator()
    for data in datas:
        if aggregator.add_user_record(partition_key, data) is not None:
            raise ValueError("the aggregate filled up: pass fewer records")
    record = aggregator.clear_and_get()
    key, explicit, data = record.get_contents()
    entry: Dict[str, Any] = {"data": data, "partition_key": key}
    if explicit is not None:
        entry["explicit_hash_key"] = explicit
    return entry


def lambda_event(record: Dict[str, Any]) -> Dict[str, Any]:
    """A record of ``streams.read_all`` as AWS Lambda's Kinesis event holds it, the form aws-kinesis-agg reads."""
    return {"kinesis": {"kinesisSchemaVersion": "1.0", "sequenceNumber": record["sequence_number"],
                        "approximateArrivalTimestamp": 0, "partitionKey": record["partition_key"],
                        "data": base64.b64encode(record["data"])}}


def user_records(record: Dict[str, Any]) -> Iterable[Dict[str, Any]]:
    """The user records of a record of ``streams.read_all`` as aws-kinesis-agg de-aggregates them (Lambda's form;
    a plain record is one user record, not marked ``aggregated``)."""
    return iter_deaggregate_records([lambda_event(record)])


def key_name(i: int) -> str:
    return f"key-{i:02d}"


def tick_entries(first: int, count: int, keys: int) -> List[Dict[str, Any]]:
    """The put_records entries of records first .. first+count-1, in order: record n is ``key-KK:SSSSSSS``, the
    (n // keys)-th record of key n % keys, under that key; the records of the keys whose number is a multiple of 5
    (a fifth) go as one KPL aggregate per key, in the place of the key's first record."""
    plain: List[Tuple[int, Dict[str, Any]]] = []
    grouped: Dict[int, Tuple[int, List[str]]] = {}
    for n in range(first, first + count):
        k = n % keys
        data = f"{key_name(k)}:{n // keys:07d}"
        if k % 5 == 0:
            grouped.setdefault(k, (n, []))[1].append(data)
        else:
            plain.append((n, {"data": data, "partition_key": key_name(k)}))
    aggregated = [(n, aggregate(key_name(k), datas)) for k, (n, datas) in grouped.items()]
    return [entry for _, entry in sorted(plain + aggregated, key=lambda e: e[0])]


def _hash_range(shard: Dict[str, Any]) -> Tuple[int, int]:
    return int(shard["HashKeyRange"]["StartingHashKey"]), int(shard["HashKeyRange"]["EndingHashKey"])


def _judged(record: Dict[str, Any], hash_range: Tuple[int, int]) -> Iterable[Tuple[Dict[str, Any], bool]]:
    """The user records of ``record``, each with whether a KCL-style consumer drops it: an aggregated one whose
    partition key hashes outside the range of the shard that holds it."""
    low, high = hash_range
    for user in user_records(record):
        aggregated = bool(user["kinesis"].get("aggregated"))
        yield user, aggregated and not low <= hash_key(user["kinesis"]["partitionKey"]) <= high


def read_as_kcl(kinesis, stream: str, timeout: float = 120.0) -> Tuple[List[Dict[str, Any]], int]:
    """Every user record a KCL-style consumer keeps, in the order it reads them: dicts with ``data`` (str),
    ``partition_key``, ``shard_id``, ``arrival_timestamp`` (the Kinesis record's) and ``aggregated``; and how many
    sub-records it dropped for lying outside their shard's hash range."""
    ranges = {s["ShardId"]: _hash_range(s) for s in streams.list_shards(kinesis, stream)}
    kept: List[Dict[str, Any]] = []
    dropped = 0
    for record in streams.read_all(kinesis, stream, timeout):  # shard by shard in shard-id order: parents first
        for user, outside in _judged(record, ranges[record["shard_id"]]):
            if outside:
                dropped += 1
                continue
            kept.append({"data": base64.b64decode(user["kinesis"]["data"]).decode("utf-8"),
                         "partition_key": user["kinesis"]["partitionKey"], "shard_id": record["shard_id"],
                         "arrival_timestamp": record["arrival_timestamp"],
                         "aggregated": bool(user["kinesis"].get("aggregated"))})
    return kept, dropped


class KclTail:
    """The distinct user records' data a KCL-style consumer keeps of a stream, gathered as they arrive
    (``streams.Tail``): each ``poll`` costs what arrived since the last, and never waits for a busy stream to answer
    empty, as read_as_kcl does. For waiting until an output holds records; read_as_kcl checks their order."""

    def __init__(self, kinesis, stream: str) -> None:
        self.data: set = set()
        self._tail = streams.Tail(kinesis, stream, on_records=self._add)

    def _add(self, shard: Dict[str, Any], records: List[Dict[str, Any]]) -> None:
        hash_range = _hash_range(shard)
        for record in records:
            self.data.update(base64.b64decode(user["kinesis"]["data"]).decode("utf-8")
                             for user, outside in _judged(record, hash_range) if not outside)

    def poll(self) -> int:
        """Reads on, and returns how many distinct records it has kept so far."""
        self._tail.poll()
        return len(self.data)


def by_key(records: Iterable[Dict[str, Any]]) -> Dict[str, List[str]]:
    """Each partition key's records' data in read order."""
    out: Dict[str, List[str]] = {}
    for r in records:
        out.setdefault(r["partition_key"], []).append(r["data"])
    return out


def violations(expected: Dict[str, List[str]], read: Dict[str, List[str]]) -> Tuple[List[str], List[str]]:
    """How `read` departs from `expected` (each key's items in their order), at least once allowed: the items
    missing from `read`, and the order violations, an item read for the first time after an item that follows
    it in `expected` (a replay, an item read again, is no violation). Items `expected` does not hold count as
    violations too."""
    missing: List[str] = []
    broken: List[str] = []
    for key, items in expected.items():
        place = {x: i for i, x in enumerate(items)}
        seen = set()
        furthest = -1
        for x in read.get(key, []):
            if x not in place:
                broken.append(f"{key}: {x} is not among the expected items")
                continue
            if x not in seen and place[x] < furthest:
                broken.append(f"{key}: {x} read after {items[furthest]}")
            seen.add(x)
            furthest = max(furthest, place[x])
        missing.extend(x for x in items if x not in seen)
    for key in read.keys() - expected.keys():
        broken.append(f"{key}: a key that was not written ({len(read[key])} items)")
    return missing, broken
