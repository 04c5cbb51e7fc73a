"""A DynamoDB Streams endpoint in front of moto that rotates or splits a stream's shard on command.

moto keeps one open shard per stream forever, so a reader's way from an ended shard into its children never happens
there. ``ReshardingStreams`` is a ``FaultProxy`` (the same HTTP plumbing, lifecycle, call counters and injected
errors) that sits in front of moto and serves the DynamoDB Streams reads of every stream itself, from moto's one
shard:

* ``split(stream_arn)`` presents moto's shard as a parent that ends at a sequence number (by default the last change
  moto holds now) and two children whose ``ParentShardId`` is the parent; each change after that point belongs to
  one child, chosen by its item's key, so every key's later changes stay in one child. ``rotate(stream_arn)`` is the
  same with one child (DynamoDB's routine shard rollover).
* DescribeStream answers moto's description with those shards (the parent with its ``EndingSequenceNumber``, the
  children open from the next sequence number), and honours ``ShardFilter{Type=CHILD_SHARDS, ShardId}`` as the
  service does (moto ignores it): only that shard's children. ``child_lookups()`` lists the shards asked about,
  ``whole_listings()`` counts the unfiltered DescribeStream calls.
* GetShardIterator and GetRecords serve each shard's changes in order under iterators of the proxy's own (opaque
  strings naming the stream, the shard and the position), reading moto's shard underneath; the parent's last page
  has no ``NextShardIterator``. An unknown shard is answered ResourceNotFoundException.
* ``reads()`` is the order in which shards were read (``("read", shard)`` for each GetShardIterator and GetRecords
  call, ``("ended", shard)`` when the parent's last page was served), for tests that check a child was read only
  after its parent ended; ``first_read(shard)`` and ``ended_at(shard)`` index into it.

Everything else (DynamoDB's own calls, ListStreams) goes to moto through the ``FaultProxy`` path untouched. One
split per stream; the proxy listens on 127.0.0.1 only and uses the Python standard library only.

::

    with ReshardingStreams(moto_endpoint) as proxy:
        ... write changes to moto ...
        parent, children = proxy.split(stream_arn)
        ... write more, read with endpointUrl=proxy.endpoint ...
        assert proxy.first_read(children[0]) > proxy.ended_at(parent)
"""

from __future__ import annotations

import base64
import http.client
import json
import threading
import uuid
import zlib
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

from .fault_proxy import FaultProxy, _Handler, _Reply, _error_reply

__all__ = ["ReshardingStreams", "STREAMS_TARGET_PREFIX"]

STREAMS_TARGET_PREFIX = "DynamoDBStreams_20120810."
JSON_10 = "application/x-amz-json-1.0"
ITERATOR_PREFIX = "reshard-proxy:"
# What the proxy signs its own calls to moto with: moto reads the service and region from the credential scope.
ACCESS_KEY = "local-test-key"
PAGE = 1000
SERVED = ("DescribeStream", "GetShardIterator", "GetRecords")


class _Split(NamedTuple):
    """One stream's reshard: moto's shard ends after ``point`` and the changes after it go to ``children``."""

    parent: str
    point: int
    children: Tuple[str, ...]


def _reply(payload: Dict[str, Any]) -> _Reply:
    body = json.dumps(payload, separators=(",", ":")).encode("utf-8")
    return _Reply(200, "OK", [("Content-Type", JSON_10), ("x-amzn-RequestId", str(uuid.uuid4()))], body)


def _seq(record: Dict[str, Any]) -> int:
    return int(record["dynamodb"]["SequenceNumber"])


def _key_slot(record: Dict[str, Any], count: int) -> int:
    """Which of ``count`` children a change belongs to, by its item's key (the same key, the same child)."""
    keys = json.dumps(record["dynamodb"].get("Keys") or {}, sort_keys=True, separators=(",", ":"))
    return zlib.crc32(keys.encode("utf-8")) % count


class ReshardingStreams(FaultProxy):
    """A FaultProxy in front of moto that serves DynamoDB Streams reads with shards moto does not make. See the
    module docstring. All methods are thread-safe."""

    def __init__(self, upstream: Any, **options: Any):
        super().__init__(upstream, **options)
        self._splits: Dict[str, _Split] = {}
        self._moto_shards: Dict[str, str] = {}
        self._reads: List[Tuple[str, str]] = []
        self._child_lookups: List[str] = []
        self._whole_listings = 0
        self._local = threading.local()

    # -- commands ---------------------------------------------------------------------------------------------------

    def split(self, stream_arn: str, *, children: int = 2, after: Optional[int] = None) -> Tuple[str, List[str]]:
        """Ends moto's shard of ``stream_arn`` after sequence number ``after`` (default: the last change moto holds
        now, which must exist) with ``children`` children; returns the parent's id and the children's."""
        if children not in (1, 2):
            raise ValueError(f"a shard rotates into one child or splits into two, not {children}")
        parent = self._moto_shard(stream_arn)
        changes = self._moto_records(stream_arn, None)
        first = changes[0] if changes else None
        point = after if after is not None else (_seq(changes[-1]) if changes else None)
        if point is None or first is None or not _seq(first) - 1 <= point <= _seq(changes[-1]):
            raise ValueError(f"the point must be a sequence number moto holds for {stream_arn}, got {point}")
        kids = tuple(f"{parent}-{'rotated' if children == 1 else 'split'}-{i}" for i in range(children))
        with self._lock:
            if stream_arn in self._splits:
                raise ValueError(f"{stream_arn} was split already")
            self._splits[stream_arn] = _Split(parent, point, kids)
        return parent, list(kids)

    def rotate(self, stream_arn: str, *, after: Optional[int] = None) -> Tuple[str, str]:
        """``split`` into one child: the parent's id and the child's."""
        parent, kids = self.split(stream_arn, children=1, after=after)
        return parent, kids[0]

    # -- what was asked -------------------------------------------------------------------------------------------

    def reads(self) -> List[Tuple[str, str]]:
        """``("read", shard)`` per GetShardIterator or GetRecords call and ``("ended", shard)`` per last page of a
        parent, in the order served."""
        with self._lock:
            return list(self._reads)

    def first_read(self, shard: str) -> Optional[int]:
        """The index in ``reads()`` of the first call on ``shard``, None if it was never read."""
        return next((i for i, (kind, s) in enumerate(self.reads()) if kind == "read" and s == shard), None)

    def ended_at(self, shard: str) -> Optional[int]:
        """The index in ``reads()`` where ``shard``'s last page was first served, None if never."""
        return next((i for i, (kind, s) in enumerate(self.reads()) if kind == "ended" and s == shard), None)

    def child_lookups(self) -> List[str]:
        """The shards whose children DescribeStream was asked for (``ShardFilter`` CHILD_SHARDS), in order."""
        with self._lock:
            return list(self._child_lookups)

    def whole_listings(self) -> int:
        """DescribeStream calls without a ShardFilter."""
        with self._lock:
            return self._whole_listings

    # -- serving ----------------------------------------------------------------------------------------------------

    def _plan_and_run(self, handler: _Handler, operation: str, request: Optional[Dict[str, Any]],
                      body: bytes) -> _Reply:
        target = handler.headers.get("X-Amz-Target") or ""
        if request is None or not target.startswith(STREAMS_TARGET_PREFIX) or operation not in SERVED:
            return super()._plan_and_run(handler, operation, request, body)
        with self._lock:
            self._calls[operation] += 1
            self._changed.notify_all()
            fault = self._rule_fault(operation, (request.get("StreamArn"), request.get("ShardId")))
            if fault is not None:
                return fault
        self._local.authorization = handler.headers.get("Authorization")
        try:
            if operation == "DescribeStream":
                return self._describe(handler, request, body)
            if operation == "GetShardIterator":
                return self._shard_iterator(request)
            return self._get_records(request)
        except _Unanswered as e:
            return _error_reply(400, "ResourceNotFoundException", str(e))

    def _describe(self, handler: _Handler, request: Dict[str, Any], body: bytes) -> _Reply:
        reply = self._forward(handler, "DescribeStream", body)
        if reply.status != 200:
            return reply
        payload = json.loads(reply.body)
        description = payload["StreamDescription"]
        arn = request["StreamArn"]
        shards = description.get("Shards") or []
        if shards:
            with self._lock:
                self._moto_shards.setdefault(arn, shards[0]["ShardId"])
                split = self._splits.get(arn)
            if split is not None:
                start = shards[0]["SequenceNumberRange"]["StartingSequenceNumber"]
                shards = [{"ShardId": split.parent, "SequenceNumberRange": {
                    "StartingSequenceNumber": start, "EndingSequenceNumber": str(split.point)}}]
                shards += [{"ShardId": child, "ParentShardId": split.parent,
                            "SequenceNumberRange": {"StartingSequenceNumber": str(split.point + 1)}}
                           for child in split.children]
        wanted = request.get("ShardFilter") or {}
        with self._lock:
            if wanted.get("Type") == "CHILD_SHARDS":
                self._child_lookups.append(str(wanted.get("ShardId")))
                shards = [s for s in shards if s.get("ParentShardId") == wanted.get("ShardId")]
            else:
                self._whole_listings += 1
        description["Shards"] = shards
        description.pop("LastEvaluatedShardId", None)
        return _reply({"StreamDescription": description})

    def _owns(self, arn: str, shard: str, record: Dict[str, Any]) -> bool:
        split = self._splits.get(arn)
        if split is None:
            return True
        if shard == split.parent:
            return _seq(record) <= split.point
        return _seq(record) > split.point and split.children[_key_slot(record, len(split.children))] == shard

    def _check_shard(self, arn: str, shard: str) -> None:
        with self._lock:
            split = self._splits.get(arn)
        known: Tuple[str, ...] = (split.parent,) + split.children if split is not None else (self._moto_shard(arn),)
        if shard not in known:
            raise _Unanswered(f"Requested resource not found: Shard: {shard} in Stream: {arn} (ReshardingStreams)")

    def _shard_iterator(self, request: Dict[str, Any]) -> _Reply:
        arn, shard, kind = request["StreamArn"], request["ShardId"], request["ShardIteratorType"]
        self._check_shard(arn, shard)
        with self._lock:
            self._reads.append(("read", shard))
        if kind == "TRIM_HORIZON":
            position: Optional[int] = None
        elif kind == "LATEST":
            owned = [r for r in self._moto_records(arn, None) if self._owns(arn, shard, r)]
            position = _seq(owned[-1]) if owned else None
        elif kind == "AT_SEQUENCE_NUMBER":
            position = int(request["SequenceNumber"]) - 1
        elif kind == "AFTER_SEQUENCE_NUMBER":
            position = int(request["SequenceNumber"])
        else:
            return _error_reply(400, "ValidationException", f"ShardIteratorType {kind} (ReshardingStreams)")
        return _reply({"ShardIterator": self._iterator(arn, shard, position)})

    def _get_records(self, request: Dict[str, Any]) -> _Reply:
        token = str(request.get("ShardIterator") or "")
        if not token.startswith(ITERATOR_PREFIX):
            return _error_reply(400, "ValidationException", "an iterator ReshardingStreams did not hand out")
        arn, shard, position = json.loads(base64.urlsafe_b64decode(token[len(ITERATOR_PREFIX):]))
        limit = int(request.get("Limit") or PAGE)
        owned = [r for r in self._moto_records(arn, position) if self._owns(arn, shard, r)]
        page = owned[:limit]
        after = _seq(page[-1]) if page else position
        with self._lock:
            split = self._splits.get(arn)
            ended = split is not None and shard == split.parent and len(owned) == len(page)
            self._reads.append(("read", shard))
            if ended:
                self._reads.append(("ended", shard))
        payload: Dict[str, Any] = {"Records": page}
        if not ended:
            payload["NextShardIterator"] = self._iterator(arn, shard, after)
        return _reply(payload)

    @staticmethod
    def _iterator(arn: str, shard: str, position: Optional[int]) -> str:
        text = json.dumps([arn, shard, position], separators=(",", ":")).encode("utf-8")
        return ITERATOR_PREFIX + base64.urlsafe_b64encode(text).decode("ascii")

    # -- moto underneath --------------------------------------------------------------------------------------------

    def _moto_shard(self, arn: str) -> str:
        with self._lock:
            known = self._moto_shards.get(arn)
        if known is None:
            shards = self._moto("DescribeStream", {"StreamArn": arn}, arn)["StreamDescription"].get("Shards") or []
            if not shards:
                raise _Unanswered(f"moto lists no shard of {arn}")
            known = shards[0]["ShardId"]
            with self._lock:
                self._moto_shards[arn] = known
        return known

    def _moto_records(self, arn: str, after: Optional[int]) -> List[Dict[str, Any]]:
        """Every change of moto's shard of ``arn`` after sequence number ``after`` (all of them for None)."""
        ask: Dict[str, Any] = {"StreamArn": arn, "ShardId": self._moto_shard(arn)}
        if after is None:
            ask["ShardIteratorType"] = "TRIM_HORIZON"
        else:
            ask.update(ShardIteratorType="AFTER_SEQUENCE_NUMBER", SequenceNumber=str(after))
        iterator = self._moto("GetShardIterator", ask, arn)["ShardIterator"]
        records: List[Dict[str, Any]] = []
        while True:
            page = self._moto("GetRecords", {"ShardIterator": iterator, "Limit": PAGE}, arn)
            got = page.get("Records") or []
            if not got:
                return records
            records += got
            iterator = page["NextShardIterator"]

    def _moto(self, operation: str, payload: Dict[str, Any], arn: str) -> Dict[str, Any]:
        """One DynamoDB Streams call of the proxy's own to moto, signed as the client's call was (else as a local
        test key in the stream's region: moto reads the service and region from the credential scope)."""
        region = arn.split(":")[3]
        authorization = getattr(self._local, "authorization", None) or (
            f"AWS4-HMAC-SHA256 Credential={ACCESS_KEY}/20260101/{region}/dynamodb/aws4_request, "
            "SignedHeaders=content-type;host;x-amz-target, Signature=0")
        conn = http.client.HTTPConnection(self.upstream_host, self.upstream_port, timeout=self.upstream_timeout)
        try:
            conn.request("POST", "/", body=json.dumps(payload).encode("utf-8"), headers={
                "Content-Type": JSON_10, "X-Amz-Target": STREAMS_TARGET_PREFIX + operation,
                "Authorization": authorization})
            response = conn.getresponse()
            data = response.read()
        finally:
            conn.close()
        if response.status != 200:
            raise _Unanswered(f"moto answered {operation} with {response.status}: {data[:300]!r}")
        return json.loads(data)


class _Unanswered(Exception):
    """A shard the proxy does not know, or a call moto refused: answered ResourceNotFoundException."""
