"""boto3 helpers for tests: make streams on a local Kinesis server, write records, read them all back.

Only tests import this module (it needs boto3, the harness itself does not). Every wait is bounded.
Works against both local servers: kinesis-mock and kinesalite (see local_kinesis.py).
"""

from __future__ import annotations

import time
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

__all__ = ["client", "create_stream", "delete_stream", "wait_active", "list_shards", "split_in_half", "put_records",
           "read_all", "data_set", "Tail"]

REGION = "us-east-1"
MAX_PUT_RECORDS = 500
MAX_GET_RECORDS = 10_000

Record = Union[Dict[str, Any], Tuple[Any, str], Tuple[Any, str, str]]


def client(server: Any, **config: Any):
    """A boto3 Kinesis client for a LocalKinesis (or an endpoint URL), region us-east-1, dummy keys."""
    import boto3
    from botocore.config import Config

    endpoint = server if isinstance(server, str) else server.endpoint
    options = {
        "retries": {"max_attempts": 3, "mode": "standard"},
        "connect_timeout": 5,
        "read_timeout": 60,
        "max_pool_connections": 20,
    }
    options.update(config)
    return boto3.client(
        "kinesis",
        endpoint_url=endpoint,
        region_name=REGION,
        aws_access_key_id="local-test-key",
        aws_secret_access_key="local-test-secret",
        config=Config(**options),
    )


def wait_active(kinesis, name: str, timeout: float = 30.0) -> Dict[str, Any]:
    """Waits until the stream is ACTIVE; returns its DescribeStreamSummary description."""
    deadline = time.monotonic() + timeout
    while True:
        summary = kinesis.describe_stream_summary(StreamName=name)["StreamDescriptionSummary"]
        if summary["StreamStatus"] == "ACTIVE":
            return summary
        if time.monotonic() > deadline:
            raise TimeoutError(f"stream {name} is still {summary['StreamStatus']} after {timeout:.0f} s")
        time.sleep(0.05)


def create_stream(kinesis, name: str, shards: int, timeout: float = 30.0) -> Dict[str, Any]:
    """Creates a provisioned stream with ``shards`` shards and waits until it is ACTIVE."""
    kinesis.create_stream(StreamName=name, ShardCount=shards)
    return wait_active(kinesis, name, timeout)


def delete_stream(kinesis, name: str, timeout: float = 30.0, missing_ok: bool = False,
                  with_consumers: bool = False) -> None:
    """Deletes the stream and waits until the server no longer knows it.

    Asks DescribeStreamSummary rather than ListStreams, which pages (kinesalite's pages hold ten names).
    With ``missing_ok`` a stream that does not exist is left alone: DeleteStream is not sent at all,
    because kinesis-mock answers ResourceNotFound yet still removes the name half a second later,
    taking with it a stream created under that name in the meantime. ``with_consumers`` deletes the stream's
    enhanced fan-out consumers with it."""
    try:
        kinesis.describe_stream_summary(StreamName=name)
    except kinesis.exceptions.ResourceNotFoundException:
        if missing_ok:
            return
        raise
    if with_consumers:
        kinesis.delete_stream(StreamName=name, EnforceConsumerDeletion=True)
    else:
        kinesis.delete_stream(StreamName=name)
    deadline = time.monotonic() + timeout
    while True:
        try:
            kinesis.describe_stream_summary(StreamName=name)
        except kinesis.exceptions.ResourceNotFoundException:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"stream {name} still exists {timeout:.0f} s after DeleteStream")
        time.sleep(0.05)


def list_shards(kinesis, stream: str, page_size: int = 1000,
                max_pages: int = 1000) -> List[Dict[str, Any]]:
    """Every shard of the stream (open and closed), following NextToken where the server pages.

    kinesalite ignores MaxResults/NextToken and answers with all shards at once.
    """
    shards: Dict[str, Dict[str, Any]] = {}
    response = kinesis.list_shards(StreamName=stream, MaxResults=page_size)
    for _ in range(max_pages):
        for shard in response.get("Shards", []):
            shards.setdefault(shard["ShardId"], shard)
        token = response.get("NextToken")
        if not token:
            break
        response = kinesis.list_shards(NextToken=token, MaxResults=page_size)
    else:
        raise RuntimeError(f"ListShards of {stream} did not end within {max_pages} pages")
    return sorted(shards.values(), key=lambda s: s["ShardId"])


def split_in_half(kinesis, stream: str, shard_id: str) -> None:
    """SplitShard at the middle of the shard's hash range; waits for ACTIVE."""
    shard = next(s for s in list_shards(kinesis, stream) if s["ShardId"] == shard_id)
    lo, hi = int(shard["HashKeyRange"]["StartingHashKey"]), int(shard["HashKeyRange"]["EndingHashKey"])
    kinesis.split_shard(StreamName=stream, ShardToSplit=shard_id, NewStartingHashKey=str((lo + hi + 1) // 2))
    wait_active(kinesis, stream)


def _entry(record: Record) -> Dict[str, Any]:
    if isinstance(record, dict):
        entry = {"Data": record.get("Data", record.get("data")),
                 "PartitionKey": record.get("PartitionKey", record.get("partition_key"))}
        explicit = record.get("ExplicitHashKey", record.get("explicit_hash_key"))
        if explicit is not None:
            entry["ExplicitHashKey"] = explicit
    else:
        entry = {"Data": record[0], "PartitionKey": record[1]}
        if len(record) > 2 and record[2] is not None:
            entry["ExplicitHashKey"] = record[2]
    if isinstance(entry["Data"], str):
        entry["Data"] = entry["Data"].encode("utf-8")
    if entry["Data"] is None or not entry["PartitionKey"]:
        raise ValueError(f"a record needs data and a partition key: {record!r}")
    return entry


def put_records(kinesis, stream: str, records: Iterable[Record],
                max_attempts: int = 10) -> List[Dict[str, str]]:
    """Writes records with PutRecords, 500 at a time, re-sending failed entries until all land.

    A record is a dict (``Data``/``PartitionKey``/``ExplicitHashKey`` or ``data``/``partition_key``)
    or a tuple ``(data, partition_key[, explicit_hash_key])``; str data is UTF-8 encoded.
    Returns ``{"ShardId", "SequenceNumber"}`` for each record, in input order.
    """
    entries = [_entry(r) for r in records]
    results: List[Optional[Dict[str, str]]] = [None] * len(entries)
    for start in range(0, len(entries), MAX_PUT_RECORDS):
        pending = list(range(start, min(start + MAX_PUT_RECORDS, len(entries))))
        for attempt in range(1, max_attempts + 1):
            response = kinesis.put_records(StreamName=stream, Records=[entries[i] for i in pending])
            failed = []
            for index, result in zip(pending, response["Records"]):
                if result.get("ErrorCode"):
                    failed.append(index)
                else:
                    results[index] = {"ShardId": result["ShardId"],
                                      "SequenceNumber": result["SequenceNumber"]}
            if not failed:
                break
            if attempt == max_attempts:
                first = response["Records"][pending.index(failed[0])]
                raise RuntimeError(f"{len(failed)} records still failed after {max_attempts} attempts, "
                                   f"e.g. {first.get('ErrorCode')}: {first.get('ErrorMessage')}")
            pending = failed
            time.sleep(min(0.05 * 2 ** attempt, 1.0))
    return results  # type: ignore[return-value]


def _as_read(record: Dict[str, Any], shard_id: str) -> Dict[str, Any]:
    """A GetRecords record as read_all returns it."""
    return {
        "data": bytes(record["Data"]),
        "partition_key": record["PartitionKey"],
        "sequence_number": record["SequenceNumber"],
        "shard_id": shard_id,
        "arrival_timestamp": record.get("ApproximateArrivalTimestamp"),
    }


def _read_shard(kinesis, stream: str, shard_id: str, deadline: float) -> List[Dict[str, Any]]:
    iterator = kinesis.get_shard_iterator(StreamName=stream, ShardId=shard_id,
                                          ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
    out = []
    while iterator:
        if time.monotonic() > deadline:
            raise TimeoutError(f"reading shard {shard_id} of {stream} did not catch up in time")
        response = kinesis.get_records(ShardIterator=iterator, Limit=MAX_GET_RECORDS)
        records = response.get("Records", [])
        out.extend(_as_read(r, shard_id) for r in records)
        iterator = response.get("NextShardIterator")
        # A closed shard ends with a null iterator. An open one is caught up when a response is
        # empty and not behind (kinesalite always reports MillisBehindLatest 0 on open shards).
        if not records and response.get("MillisBehindLatest", 0) == 0:
            break
    return out


def read_all(kinesis, stream: str, timeout: float = 120.0) -> List[Dict[str, Any]]:
    """Reads every shard (open and closed) from TRIM_HORIZON until caught up.

    Returns dicts with ``data`` (bytes), ``partition_key``, ``sequence_number``, ``shard_id`` and
    ``arrival_timestamp``, shard by shard in shard-id order, each shard in sequence order.
    """
    deadline = time.monotonic() + timeout
    out: List[Dict[str, Any]] = []
    for shard in list_shards(kinesis, stream):
        out.extend(_read_shard(kinesis, stream, shard["ShardId"], deadline))
    return out


class Tail:
    """Counts a stream's records as they arrive, one poll at a time, from TRIM_HORIZON: each poll reads on from where
    the last one stopped, at most ``pages`` GetRecords per shard, so a poll costs what arrived since the last one.
    ``on_records``, if given, gets each shard's new records (its ListShards entry, and the records as read_all
    returns them).

    read_all reads from the start each time and returns only once a shard answers empty: on a stream a writer keeps
    busy, a slow server may never answer empty, and the call ends at its timeout. A poll never waits for that.
    """

    def __init__(self, kinesis, stream: str, pages: int = 5,
                 on_records: Optional[Callable[[Dict[str, Any], List[Dict[str, Any]]], None]] = None) -> None:
        self._kinesis, self._stream, self._pages = kinesis, stream, pages
        self._on_records = on_records
        self._iterators: Dict[str, Optional[str]] = {}
        self.count = 0

    def poll(self) -> int:
        """Reads what arrived since the last poll (new shards from their start) and returns the count so far."""
        for shard in list_shards(self._kinesis, self._stream):
            shard_id = shard["ShardId"]
            if shard_id not in self._iterators:
                self._iterators[shard_id] = self._kinesis.get_shard_iterator(
                    StreamName=self._stream, ShardId=shard_id, ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
            for _ in range(self._pages):
                iterator = self._iterators[shard_id]
                if not iterator:
                    break
                response = self._kinesis.get_records(ShardIterator=iterator, Limit=MAX_GET_RECORDS)
                self._iterators[shard_id] = response.get("NextShardIterator")
                records = response.get("Records", [])
                self.count += len(records)
                if self._on_records is not None and records:
                    self._on_records(shard, [_as_read(r, shard_id) for r in records])
                if not records:
                    break
        return self.count


def data_set(records: Sequence[Dict[str, Any]]) -> set:
    """The (data, partition_key) pairs of read_all's result, to compare with what was written."""
    return {(r["data"], r["partition_key"]) for r in records}
