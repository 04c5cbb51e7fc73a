"""A counting, fault-injecting HTTP proxy between a Kinesis client and a local Kinesis server.

Local servers (kinesalite, kinesis-mock) never throttle, never expire an iterator on demand and never
fail part of a PutRecords batch. ``FaultProxy`` sits in front of one of them and makes those things
happen, on a fraction of calls or on chosen calls, while it counts what the client asks for.

What it can inject
------------------
* ``throttle_get_records(rate, seed)``: GetRecords answered 400 ProvisionedThroughputExceededException.
* ``throttle_put_records(rate, seed)``: a whole PutRecords request answered the same way (nothing is written).
* ``fail_put_entries(rate, seed)``: partial PutRecords failures. The proxy forwards only the entries it
  lets through (the request body is rewritten with that subset), then merges the real results with the
  injected per-entry failures (``ErrorCode`` ProvisionedThroughputExceededException by default) back in
  the original entry order, with the right ``FailedRecordCount``. Exactly the non-failed entries land.
* ``expire_iterator_every(n)`` / ``expire_iterator_on_calls(calls)``: GetRecords answered 400
  ExpiredIteratorException on every n-th call, or on the chosen (1-based) calls.
* ``internal_failure(operation, rate, seed)``: 500 InternalFailure on any operation.
* ``inject_error(operation, error_type, ...)``: any other error (e.g. LimitExceededException on
  ListShards), on a rate, every n-th call or chosen calls, optionally only for one shard (GetRecords).
* ``trim(stream, shard_id, through_sequence)``: retention as the service applies it, which no local server
  does: the records of that shard up to and including ``through_sequence`` are gone. GetShardIterator
  AT_/AFTER_SEQUENCE_NUMBER on one of them is refused with InvalidArgumentException and TRIM_HORIZON starts
  after them. An iterator handed out before the trim whose position is now among the trimmed records (the next
  page would hold one of them) is answered as users of the real service report it (harlow/kinesis-consumer#125):
  no records, ``MillisBehindLatest`` of the retention period (24 h), and the same iterator as the next one, on
  every call; it never moves on by itself. Those answers count as ``TRIMMED_ITERATOR``.
* ``stall(stream, shard_id)``: a shard whose reader can make no progress: every GetRecords on it is answered with
  no records, the same iterator as the next one and ``MillisBehindLatest`` of a minute, whatever the shard
  holds (counted as ``STALLED``).
* ``stale_listing(stream)``: ListShards on that stream answered, from then on, with what it answered the first time
  after the call (counted as ``STALE_LISTING``): a listing that lags behind a reshard, which the service may give
  for a while after one and no local server does (they list a new shard at once).
* A shard gone while its stream exists (a closed shard deleted after the retention period):
  ``inject_error("GetShardIterator", "ResourceNotFoundException", shard=...)`` and the same for GetRecords;
  ListShards and DescribeStreamSummary still answer for the stream.

Rules are consulted in the order they were configured; the first one that fires answers the call and
later rules do not see that call. Random decisions come from a ``random.Random(seed)`` per rule, so a
single-threaded client sees the same pattern on every run. ``clear_faults()`` makes the proxy a plain
pass-through again. Error answers carry the code both in the JSON body (``__type``) and in the
``x-amzn-ErrorType`` header, as Kinesis does.

What it counts
--------------
* ``calls(operation)``: requests received per operation (``X-Amz-Target``), injected ones included.
* ``get_records_calls_by_shard()``: GetRecords requests per ``(stream, shard_id)``. Iterators are opaque,
  so the proxy learns them: a GetShardIterator request names the stream and shard, and the iterator in
  its response is mapped to that shard; each GetRecords response's ``NextShardIterator`` is then mapped
  to the same shard. GetRecords with an iterator the proxy never saw count under ``(None, None)``.
* ``calls_by_shard(operation)``: requests of one operation per ``(stream, shard_id)``: GetShardIterator by the
  shard its request names, GetRecords as ``get_records_calls_by_shard()`` counts them.
* ``get_records_calls_by_stream()``, ``put_records_requests()`` (entry count and bytes of data plus
  partition keys per PutRecords request) and ``injected(kind)`` for the faults actually delivered.

How tests use it
----------------
::

    from harness.fault_proxy import FaultProxy, THROTTLED_GET_RECORDS

    with FaultProxy(kinesalite_server).start() as proxy:      # or the ``fault_proxy`` fixture
        proxy.throttle_get_records(0.3, seed=7)
        ... point the client at proxy.endpoint (Spark: connector_options(proxy), CBOR stays off) ...
        assert proxy.injected(THROTTLED_GET_RECORDS) > 0

The pytest fixture ``fault_proxy`` (in ``fault_fixtures.py``) wraps the session ``kinesalite_server``.

The client must speak JSON (the Java SDK with CBOR off, or boto3). Requests that are not JSON are
counted by operation and passed through untouched, without faults. The proxy listens on 127.0.0.1 only,
on a free port, one thread per client connection, with keep-alive HTTP/1.1 on both sides. It uses only
the Python standard library.
"""

from __future__ import annotations

import base64
import http.client
import json
import logging
import random
import socket
import socketserver
import threading
import time
import uuid
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, Iterable, List, NamedTuple, Optional, Set, Tuple, Union
from urllib.parse import urlsplit

from .waiting import WaitFailed, wait_for

__all__ = [
    "FaultProxy",
    "PutRecordsRequest",
    "start",
    "THROTTLED_GET_RECORDS",
    "THROTTLED_PUT_RECORDS",
    "FAILED_PUT_ENTRIES",
    "PARTIAL_PUT_RECORDS",
    "EXPIRED_ITERATOR",
    "INTERNAL_FAILURE",
    "TRIMMED_POSITION",
    "TRIMMED_ITERATOR",
    "UNKNOWN_SHARD",
]

_log = logging.getLogger(__name__)

HOST = "127.0.0.1"
TARGET_PREFIX = "Kinesis_20131202."
JSON_CONTENT_TYPE = "application/x-amz-json-1.1"
THROTTLED = "ProvisionedThroughputExceededException"
EXPIRED = "ExpiredIteratorException"

# Kinds of injected faults, for ``injected(kind)``.
THROTTLED_GET_RECORDS = "throttled_get_records"   # GetRecords requests answered with a throttle
THROTTLED_PUT_RECORDS = "throttled_put_records"   # whole PutRecords requests answered with a throttle
FAILED_PUT_ENTRIES = "failed_put_entries"         # PutRecords entries answered with an ErrorCode
PARTIAL_PUT_RECORDS = "partial_put_records"       # PutRecords requests with at least one such entry
EXPIRED_ITERATOR = "expired_iterator"             # GetRecords requests answered ExpiredIteratorException
INTERNAL_FAILURE = "internal_failure"             # requests answered 500 InternalFailure
TRIMMED_POSITION = "trimmed_position"             # GetShardIterator refused: the sequence number was trimmed
TRIMMED_ITERATOR = "trimmed_iterator"             # GetRecords on an iterator whose position was trimmed (stuck)
STALLED = "stalled"                               # GetRecords on a stalled shard: nothing, ever
STALE_LISTING = "stale_listing"                   # ListShards answered with an earlier answer (a lagging listing)

#: MillisBehindLatest of a GetRecords answer on a stalled shard.
STALLED_MILLIS_BEHIND = 60_000
#: MillisBehindLatest of a GetRecords answer on an iterator whose position was trimmed: the default retention.
TRIMMED_ITERATOR_MILLIS_BEHIND = 24 * 3600 * 1000

#: The key ``get_records_calls_by_shard`` uses for iterators the proxy did not see being handed out.
UNKNOWN_SHARD: Tuple[None, None] = (None, None)

# How long a client connection may stay idle before the proxy closes it. Longer than the SDKs' own
# idle limits (the Java SDK drops pooled connections after 60 s), so the client normally closes first.
CLIENT_IDLE_TIMEOUT_S = 120.0
UPSTREAM_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 5.0
MAX_BODY_BYTES = 64 * 1024 * 1024

# Headers that belong to one connection and are never copied across the proxy.
_HOP_BY_HOP = frozenset({
    "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection",
    "te", "trailer", "transfer-encoding", "upgrade", "expect", "content-length",
})

Shard = Tuple[Optional[str], Optional[str]]


class PutRecordsRequest(NamedTuple):
    """One PutRecords request as the client sent it (before any fault was injected)."""

    entry_count: int
    #: Bytes of data plus partition keys (UTF-8), as Kinesis counts them against its limits.
    total_bytes: int


# ---------------------------------------------------------------------------------------------
# Fault rules
# ---------------------------------------------------------------------------------------------

class _Trigger:
    """Decides, call by call, whether a rule fires. Called with the proxy's lock held."""

    def fires(self, seen: int) -> bool:  # seen: 1-based number of the matching call
        raise NotImplementedError


class _Rate(_Trigger):
    def __init__(self, rate: float, seed: int):
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"rate must be within [0, 1], got {rate}")
        self.rate = rate
        self.rng = random.Random(seed)

    def fires(self, seen: int) -> bool:
        # Always draw, so the pattern depends only on the seed and the number of calls.
        return self.rng.random() < self.rate


class _Every(_Trigger):
    def __init__(self, n: int):
        if n < 1:
            raise ValueError(f"every must be at least 1, got {n}")
        self.n = n

    def fires(self, seen: int) -> bool:
        return seen % self.n == 0


class _OnCalls(_Trigger):
    def __init__(self, calls: Iterable[int]):
        self.calls: Set[int] = {int(c) for c in calls}
        if any(c < 1 for c in self.calls):
            raise ValueError(f"call numbers are 1-based, got {sorted(self.calls)}")

    def fires(self, seen: int) -> bool:
        return seen in self.calls


class _ErrorRule:
    """Answer some calls of one operation with an error instead of forwarding them."""

    def __init__(self, kind: str, operation: str, error_type: str, status: int, message: str,
                 trigger: _Trigger, shard: Union[None, str, Tuple[str, str]],
                 max_count: Optional[int]):
        self.kind = kind
        self.operation = operation
        self.error_type = error_type
        self.status = status
        self.message = message
        self.trigger = trigger
        self.shard = shard
        self.max_count = max_count
        self.seen = 0
        self.fired = 0

    def matches(self, operation: str, shard: Shard) -> bool:
        if operation != self.operation:
            return False
        if self.shard is None:
            return True
        if isinstance(self.shard, str):
            return shard[1] == self.shard
        return tuple(shard) == tuple(self.shard)

    def decide(self) -> bool:
        self.seen += 1
        if self.max_count is not None and self.fired >= self.max_count:
            return False
        if self.trigger.fires(self.seen):
            self.fired += 1
            return True
        return False


class _EntryFailures:
    """Fail single PutRecords entries (partial failures)."""

    def __init__(self, rate: float, seed: int, error_code: str, message: str,
                 max_count: Optional[int]):
        self.trigger = _Rate(rate, seed)
        self.error_code = error_code
        self.message = message
        self.max_count = max_count
        self.fired = 0

    def choose(self, count: int) -> List[bool]:
        chosen = []
        for _ in range(count):
            fire = self.trigger.fires(0)
            if fire and self.max_count is not None and self.fired >= self.max_count:
                fire = False
            if fire:
                self.fired += 1
            chosen.append(fire)
        return chosen


class _Reply(NamedTuple):
    status: int
    reason: str
    headers: List[Tuple[str, str]]
    body: bytes


def _json_reply(status: int, payload: Dict[str, Any], error_type: Optional[str] = None) -> _Reply:
    headers = [("Content-Type", JSON_CONTENT_TYPE), ("x-amzn-RequestId", str(uuid.uuid4()))]
    if error_type:
        headers.append(("x-amzn-ErrorType", error_type))
    body = json.dumps(payload, separators=(",", ":")).encode("utf-8")
    return _Reply(status, http.client.responses.get(status, ""), headers, body)


def _error_reply(status: int, error_type: str, message: Optional[str]) -> _Reply:
    payload: Dict[str, Any] = {"__type": error_type}
    if message:
        payload["message"] = message
    return _json_reply(status, payload, error_type)


def _stream_of(body: Dict[str, Any]) -> Optional[str]:
    """The stream a request names, by StreamName or StreamARN (arn:aws:kinesis:REGION:ACCOUNT:stream/NAME)."""
    name = body.get("StreamName")
    if name:
        return name
    arn = body.get("StreamARN")
    if isinstance(arn, str) and ":stream/" in arn:
        return arn.split(":stream/", 1)[1].split("/", 1)[0]
    return None


def _entry_bytes(entry: Dict[str, Any]) -> int:
    data = entry.get("Data") or ""
    try:
        size = len(base64.b64decode(data))
    except (ValueError, TypeError):
        size = len(str(data))
    return size + len(str(entry.get("PartitionKey") or "").encode("utf-8"))


# ---------------------------------------------------------------------------------------------
# HTTP plumbing
# ---------------------------------------------------------------------------------------------

class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = False

    def __init__(self, proxy: "FaultProxy"):
        self.proxy = proxy
        super().__init__((HOST, 0), _Handler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind would look up the host's FQDN (a DNS query); the name is not needed.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = HOST, self.server_address[1]


class _Handler(BaseHTTPRequestHandler):
    """One client connection. Keeps its own keep-alive connection to the upstream server."""

    protocol_version = "HTTP/1.1"
    server_version = "FaultProxy"
    timeout = CLIENT_IDLE_TIMEOUT_S
    server: _Server

    def setup(self) -> None:
        super().setup()
        self.upstream: Optional[http.client.HTTPConnection] = None
        self.upstream_used = False
        self.server.proxy._track(self.connection, threading.current_thread())

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self._close_upstream()
            self.server.proxy._untrack(self.connection, threading.current_thread())

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (signature of the base class)
        _log.debug("%s - %s", self.address_string(), format % args)

    # Every method goes through the same path; Kinesis only uses POST.
    def do_POST(self) -> None:
        self.server.proxy._handle(self)

    do_GET = do_PUT = do_DELETE = do_HEAD = do_OPTIONS = do_PATCH = do_POST

    # -- request and response bodies ------------------------------------------------------

    def read_body(self) -> bytes:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            return self._read_chunked()
        length = int(self.headers.get("Content-Length") or 0)
        if length < 0 or length > MAX_BODY_BYTES:
            raise ValueError(f"request body of {length} bytes")
        body = self.rfile.read(length)
        if len(body) != length:
            raise ConnectionError("the client closed the connection in the middle of a request body")
        return body

    def _read_chunked(self) -> bytes:
        parts = []
        total = 0
        while True:
            line = self.rfile.readline(1024)
            if not line:
                raise ConnectionError("the client closed the connection in the middle of a chunked body")
            size = int(line.split(b";", 1)[0].strip() or b"0", 16)
            if size == 0:
                break
            total += size
            if total > MAX_BODY_BYTES:
                raise ValueError("chunked request body too large")
            parts.append(self.rfile.read(size))
            self.rfile.readline(1024)  # the CRLF after each chunk
        while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
            pass  # trailers
        return b"".join(parts)

    def send_reply(self, reply: _Reply) -> None:
        self.send_response_only(reply.status, reply.reason or None)
        for name, value in reply.headers:
            if name.lower() not in _HOP_BY_HOP:
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(reply.body)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(reply.body)
        self.wfile.flush()

    # -- upstream ---------------------------------------------------------------------------

    def forward(self, body: bytes) -> _Reply:
        """Sends this request (with ``body``) upstream and reads the whole response.

        A reused keep-alive connection that the server closed meanwhile is retried once on a new one.
        """
        headers = {name: value for name, value in self.headers.items()
                   if name.lower() not in _HOP_BY_HOP and name.lower() not in ("host", "accept-encoding")}
        headers["Content-Length"] = str(len(body))
        headers["Accept-Encoding"] = "identity"  # the proxy reads responses
        for attempt in (1, 2):
            reused = self.upstream is not None and self.upstream_used
            conn = self._upstream_connection()
            try:
                conn.request(self.command, self.path, body=body, headers=headers)
                self.upstream_used = True
                response = conn.getresponse()
                data = response.read()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError) as e:
                self._close_upstream()
                if attempt == 1 and reused:
                    continue
                raise ConnectionError(f"upstream closed the connection: {e}") from e
            except BaseException:
                self._close_upstream()
                raise
            if response.will_close:
                self._close_upstream()
            return _Reply(response.status, response.reason, list(response.getheaders()), data)
        raise AssertionError("unreachable")

    def _upstream_connection(self) -> http.client.HTTPConnection:
        if self.upstream is None:
            proxy = self.server.proxy
            conn = http.client.HTTPConnection(proxy.upstream_host, proxy.upstream_port,
                                              timeout=proxy.upstream_timeout)
            conn.connect()  # raises OSError when the server is gone; nothing to clean up then
            self.upstream, self.upstream_used = conn, False
            proxy._track_upstream(conn.sock)
        return self.upstream

    def _close_upstream(self) -> None:
        conn, self.upstream = self.upstream, None
        if conn is not None:
            if conn.sock is not None:
                self.server.proxy._untrack_upstream(conn.sock)
            conn.close()


# ---------------------------------------------------------------------------------------------
# The proxy
# ---------------------------------------------------------------------------------------------

class FaultProxy:
    """A counting, fault-injecting proxy in front of a local Kinesis server. See the module docstring.

    ``upstream``: the server's endpoint (``http://127.0.0.1:PORT``) or an object with ``.endpoint``
    (a LocalKinesis). ``start()`` it, use ``.endpoint``, ``stop()`` it (or use it as a context manager).
    All methods are thread-safe.
    """

    def __init__(self, upstream: Any, *, upstream_timeout: float = UPSTREAM_TIMEOUT_S):
        endpoint = upstream if isinstance(upstream, str) else upstream.endpoint
        parts = urlsplit(endpoint)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"the upstream must be a plain http:// endpoint, got {endpoint!r}")
        self.upstream_endpoint = endpoint
        self.upstream_host = parts.hostname
        self.upstream_port = parts.port or 80
        self.upstream_timeout = upstream_timeout

        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)
        self._server: Optional[_Server] = None
        self._thread: Optional[threading.Thread] = None
        self._client_sockets: Set[socket.socket] = set()
        self._upstream_sockets: Set[socket.socket] = set()
        self._handler_threads: Set[threading.Thread] = set()

        self._rules: Dict[Tuple[str, str], _ErrorRule] = {}
        self._entry_failures: Optional[_EntryFailures] = None
        self._trims: Dict[Tuple[str, str], int] = {}
        self._stalls: Set[Tuple[str, str]] = set()
        self._stale_listings: Dict[str, Optional[_Reply]] = {}
        self._reset_counters_locked()

    # -- lifecycle ------------------------------------------------------------------------------

    def start(self) -> "FaultProxy":
        """Binds a free port on 127.0.0.1 and serves in a background thread. Returns self."""
        with self._lock:
            if self._server is not None:
                return self
            self._server = _Server(self)
            self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.1},
                                            name=f"fault-proxy-{self.port}", daemon=True)
            self._thread.start()
        _log.info("FaultProxy %s -> %s", self.endpoint, self.upstream_endpoint)
        return self

    def stop(self) -> None:
        """Stops serving, closes every client and upstream connection. Safe to call more than once."""
        with self._lock:
            server, self._server = self._server, None
            thread, self._thread = self._thread, None
        if server is None:
            return
        deadline = time.monotonic() + STOP_TIMEOUT_S
        server.shutdown()  # returns once serve_forever noticed (poll interval 0.1 s)
        server.server_close()
        with self._lock:
            sockets = list(self._client_sockets) + list(self._upstream_sockets)
            threads = list(self._handler_threads)
        for sock in sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        for t in threads + ([thread] if thread else []):
            t.join(max(0.0, deadline - time.monotonic()))

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the proxy is not running")
        return self._server.server_address[1]

    @property
    def endpoint(self) -> str:
        """``http://127.0.0.1:PORT``: give this to the client instead of the server's endpoint."""
        return f"http://{HOST}:{self.port}"

    @property
    def cbor_enabled(self) -> bool:
        """Always False: the proxy reads JSON only (lets ``connector_options(proxy)`` turn CBOR off)."""
        return False

    def is_running(self) -> bool:
        return self._server is not None

    def __enter__(self) -> "FaultProxy":
        return self.start()

    def __exit__(self, *exc_info: Any) -> None:
        self.stop()

    def __repr__(self) -> str:
        where = self.endpoint if self._server is not None else "stopped"
        return f"FaultProxy({where} -> {self.upstream_endpoint})"

    # -- fault configuration ------------------------------------------------------------------

    def inject_error(self, operation: str, error_type: str, *, rate: Optional[float] = None,
                     seed: int = 0, every: Optional[int] = None, calls: Optional[Iterable[int]] = None,
                     status: int = 400, message: Optional[str] = None, kind: Optional[str] = None,
                     shard: Union[None, str, Tuple[str, str]] = None,
                     max_count: Optional[int] = None) -> "FaultProxy":
        """Answer calls of ``operation`` with ``error_type`` instead of forwarding them.

        Which calls: a fraction ``rate`` (seeded), ``every`` n-th call, or the chosen 1-based ``calls``
        (exactly one of them; ``rate=1.0`` when none is given). Calls are numbered among the calls this
        rule sees since it was configured. ``shard`` (GetRecords and GetShardIterator): a shard id, or
        (stream, shard id), to fault that shard only. ``max_count``: fire at most this many times. ``kind``: the name for
        ``injected()`` (default: ``error_type``). A rule with the same kind and operation is replaced;
        ``rate=0`` removes it.
        """
        given = [x is not None for x in (rate, every, calls)]
        if sum(given) > 1:
            raise ValueError("give one of rate, every and calls")
        trigger: _Trigger
        if every is not None:
            trigger = _Every(every)
        elif calls is not None:
            trigger = _OnCalls(calls)
        else:
            trigger = _Rate(1.0 if rate is None else rate, seed)
        kind = kind or error_type
        key = (kind, operation)
        with self._lock:
            if isinstance(trigger, _Rate) and trigger.rate == 0.0:
                self._rules.pop(key, None)
                return self
            self._rules.pop(key, None)  # re-added at the end: the newest rule is consulted last
            self._rules[key] = _ErrorRule(kind, operation, error_type, status,
                                          message or f"{error_type} (injected by FaultProxy)",
                                          trigger, shard, max_count)
        return self

    def throttle_get_records(self, rate: float, seed: int = 0, **options: Any) -> "FaultProxy":
        """A fraction ``rate`` of GetRecords calls get 400 ProvisionedThroughputExceededException."""
        return self.inject_error("GetRecords", THROTTLED, rate=rate, seed=seed, kind=THROTTLED_GET_RECORDS,
                                 message="Rate exceeded for shard (injected by FaultProxy)", **options)

    def throttle_put_records(self, rate: float, seed: int = 0, **options: Any) -> "FaultProxy":
        """A fraction ``rate`` of whole PutRecords requests get 400 ProvisionedThroughputExceededException."""
        return self.inject_error("PutRecords", THROTTLED, rate=rate, seed=seed, kind=THROTTLED_PUT_RECORDS,
                                 message="Rate exceeded for stream (injected by FaultProxy)", **options)

    def expire_iterator_every(self, n: int, **options: Any) -> "FaultProxy":
        """Every n-th GetRecords call gets 400 ExpiredIteratorException."""
        return self.inject_error("GetRecords", EXPIRED, every=n, kind=EXPIRED_ITERATOR,
                                 message="Iterator expired (injected by FaultProxy)", **options)

    def expire_iterator_on_calls(self, calls: Iterable[int], **options: Any) -> "FaultProxy":
        """The chosen GetRecords calls (1-based, counted from now) get 400 ExpiredIteratorException."""
        return self.inject_error("GetRecords", EXPIRED, calls=calls, kind=EXPIRED_ITERATOR,
                                 message="Iterator expired (injected by FaultProxy)", **options)

    def internal_failure(self, operation: str, rate: float = 1.0, seed: int = 0,
                         **options: Any) -> "FaultProxy":
        """A fraction ``rate`` of ``operation`` calls get 500 InternalFailure."""
        return self.inject_error(operation, "InternalFailure", rate=rate, seed=seed, status=500,
                                 kind=INTERNAL_FAILURE, **options)

    def fail_put_entries(self, rate: float, seed: int = 0, *, error_code: str = THROTTLED,
                         message: Optional[str] = None, max_count: Optional[int] = None) -> "FaultProxy":
        """Partial PutRecords failures: each entry fails with probability ``rate`` (seeded).

        Failed entries are not written; they come back with ``ErrorCode``/``ErrorMessage``, the others
        with the server's real ``SequenceNumber``/``ShardId``. ``max_count`` bounds the failed entries.
        ``rate=0`` turns this off.
        """
        with self._lock:
            if rate == 0:
                self._entry_failures = None
            else:
                self._entry_failures = _EntryFailures(
                    rate, seed, error_code,
                    message or "Rate exceeded for shard in stream (injected by FaultProxy)", max_count)
        return self

    def stall(self, stream: str, shard_id: str) -> "FaultProxy":
        """Every GetRecords on that shard answers nothing, at a minute behind, and the same iterator: no progress."""
        with self._lock:
            self._stalls.add((stream, shard_id))
        return self

    def trim(self, stream: str, shard_id: str, through_sequence: str) -> "FaultProxy":
        """Make the records of one shard up to and including ``through_sequence`` gone, as retention does."""
        with self._lock:
            self._trims[(stream, shard_id)] = int(through_sequence)
        return self

    def stale_listing(self, stream: str) -> "FaultProxy":
        """ListShards naming ``stream`` keeps answering what it answered the first time after this call."""
        with self._lock:
            self._stale_listings[stream] = None
        return self

    def clear_faults(self) -> "FaultProxy":
        """Back to a plain pass-through. Counters (calls and injected faults) are kept."""
        with self._lock:
            self._rules.clear()
            self._entry_failures = None
            self._trims.clear()
            self._stalls.clear()
            self._stale_listings.clear()
        return self

    # -- counters -------------------------------------------------------------------------------

    def calls(self, operation: Optional[str] = None) -> int:
        """Requests received for ``operation`` (e.g. "GetRecords"), faulted ones included; all if None."""
        with self._lock:
            if operation is None:
                return sum(self._calls.values())
            return self._calls[operation]

    def calls_by_operation(self) -> Dict[str, int]:
        with self._lock:
            return dict(self._calls)

    def calls_by_shard(self, operation: str) -> Dict[Shard, int]:
        """Requests of ``operation`` per (stream, shard id), faulted ones included: GetShardIterator by the shard its
        request names, GetRecords by the shard its iterator was learnt for (``UNKNOWN_SHARD`` if none)."""
        with self._lock:
            return {shard: n for (op, shard), n in self._calls_by_shard.items() if op == operation}

    def get_records_calls_by_shard(self) -> Dict[Shard, int]:
        """GetRecords requests per (stream, shard id); ``UNKNOWN_SHARD`` for iterators not seen being issued."""
        return self.calls_by_shard("GetRecords")

    def get_records_calls_by_stream(self) -> Dict[Optional[str], int]:
        """GetRecords requests per stream (None for iterators not seen being issued)."""
        out: Counter = Counter()
        for (stream, _), n in self.get_records_calls_by_shard().items():
            out[stream] += n
        return dict(out)

    def put_records_requests(self) -> List[PutRecordsRequest]:
        """(entry_count, total_bytes) of every PutRecords request received, in arrival order."""
        with self._lock:
            return list(self._put_records)

    def injected(self, kind: str, operation: Optional[str] = None) -> int:
        """How many faults of ``kind`` were delivered (THROTTLED_GET_RECORDS, FAILED_PUT_ENTRIES, ...).

        For FAILED_PUT_ENTRIES this counts entries; for every other kind, requests.
        """
        with self._lock:
            return sum(n for (k, op), n in self._injected.items()
                       if k == kind and (operation is None or op == operation))

    def injected_counts(self) -> Dict[Tuple[str, str], int]:
        """Every delivered fault count, by (kind, operation)."""
        with self._lock:
            return dict(self._injected)

    def upstream_errors(self) -> List[str]:
        """Requests the proxy could not forward (answered 502 to the client)."""
        with self._lock:
            return list(self._upstream_errors)

    def reset_counters(self) -> None:
        """Zeroes every counter. Faults and the iterator-to-shard map are kept."""
        with self._lock:
            iterators = self._iterator_shards
            self._reset_counters_locked()
            self._iterator_shards = iterators

    def wait_until(self, predicate: Callable[["FaultProxy"], bool], timeout: float = 30.0) -> bool:
        """Waits (at most ``timeout`` s) until ``predicate(proxy)`` holds; re-checked after every request."""
        with self._changed:  # held while the predicate is looked at; released while waiting for a request
            try:
                wait_for(lambda: predicate(self), timeout, "the proxy's predicate", interval=0.5,
                         sleep=self._changed.wait)
            except WaitFailed:
                return False
            return True

    def wait_for_calls(self, operation: str, at_least: int, timeout: float = 30.0) -> int:
        """Waits until ``calls(operation) >= at_least``; returns the count. Raises TimeoutError."""
        if not self.wait_until(lambda p: p.calls(operation) >= at_least, timeout):
            raise TimeoutError(f"{self.calls(operation)} {operation} calls after {timeout:.0f} s, "
                               f"expected at least {at_least}")
        return self.calls(operation)

    def _reset_counters_locked(self) -> None:
        self._calls: Counter = Counter()
        self._calls_by_shard: Counter = Counter()  # (operation, shard)
        self._put_records: List[PutRecordsRequest] = []
        self._injected: Counter = Counter()
        self._upstream_errors: List[str] = []
        self._iterator_shards: Dict[str, Tuple[str, str]] = {}

    # -- connection bookkeeping (for stop) ----------------------------------------------------

    def _track(self, sock: socket.socket, thread: threading.Thread) -> None:
        with self._lock:
            self._client_sockets.add(sock)
            self._handler_threads.add(thread)

    def _untrack(self, sock: socket.socket, thread: threading.Thread) -> None:
        with self._lock:
            self._client_sockets.discard(sock)
            self._handler_threads.discard(thread)

    def _track_upstream(self, sock: Optional[socket.socket]) -> None:
        if sock is not None:
            with self._lock:
                self._upstream_sockets.add(sock)

    def _untrack_upstream(self, sock: socket.socket) -> None:
        with self._lock:
            self._upstream_sockets.discard(sock)

    # -- request handling ---------------------------------------------------------------------

    def _handle(self, handler: _Handler) -> None:
        try:
            body = handler.read_body()
        except (ValueError, ConnectionError, OSError) as e:
            handler.close_connection = True
            if not isinstance(e, ValueError):
                return
            handler.send_reply(_error_reply(400, "SerializationException", f"bad request body: {e}"))
            return

        target = handler.headers.get("X-Amz-Target") or ""
        operation = target[len(TARGET_PREFIX):] if target.startswith(TARGET_PREFIX) else target.rsplit(".", 1)[-1]
        request: Optional[Dict[str, Any]] = None
        if "json" in (handler.headers.get("Content-Type") or "").lower():
            try:
                parsed = json.loads(body or b"{}")
                request = parsed if isinstance(parsed, dict) else None
            except ValueError:
                request = None

        reply = self._plan_and_run(handler, operation, request, body)
        try:
            handler.send_reply(reply)
        except OSError:
            handler.close_connection = True

    def _rule_fault(self, operation: str, shard: Shard) -> Optional[_Reply]:
        """The error answer of the first configured rule that fires on this call, counted; None when none does.
        Called with the lock held."""
        for rule in list(self._rules.values()):
            if rule.matches(operation, shard) and rule.decide():
                self._injected[(rule.kind, operation)] += 1
                return _error_reply(rule.status, rule.error_type, rule.message)
        return None

    def _plan_and_run(self, handler: _Handler, operation: str, request: Optional[Dict[str, Any]],
                      body: bytes) -> _Reply:
        shard: Shard = UNKNOWN_SHARD
        remember: Optional[str] = None  # a stream whose ListShards answer is to be kept (stale_listing)
        entry_plan: Optional[List[bool]] = None
        entry_failures: Optional[_EntryFailures] = None
        with self._lock:
            self._calls[operation] += 1
            if request is not None and operation == "GetRecords":
                shard = self._iterator_shards.get(str(request.get("ShardIterator")), UNKNOWN_SHARD)
            if request is not None and operation == "GetShardIterator":
                shard = (_stream_of(request), request.get("ShardId"))
            if request is not None and operation in ("GetRecords", "GetShardIterator"):
                self._calls_by_shard[(operation, shard)] += 1
            if request is not None and operation == "PutRecords":
                entries = request.get("Records") or []
                self._put_records.append(PutRecordsRequest(len(entries), sum(_entry_bytes(e) for e in entries)))
            self._changed.notify_all()

            if request is not None and operation == "GetRecords" and shard in self._stalls:
                self._injected[(STALLED, operation)] += 1
                return _json_reply(200, {"Records": [], "NextShardIterator": str(request.get("ShardIterator")),
                                         "MillisBehindLatest": STALLED_MILLIS_BEHIND})
            if request is not None:  # faults only for JSON requests the proxy understands
                fault = self._rule_fault(operation, shard)
                if fault is not None:
                    return fault
                listed = _stream_of(request) if operation == "ListShards" else None
                if listed in self._stale_listings:
                    kept = self._stale_listings[listed]  # type: ignore[index]
                    if kept is not None:
                        self._injected[(STALE_LISTING, operation)] += 1
                        return kept
                    remember = listed
                if operation == "PutRecords" and self._entry_failures is not None:
                    entry_failures = self._entry_failures
                    entry_plan = entry_failures.choose(len(request.get("Records") or []))
                    if not any(entry_plan):
                        entry_plan = None

        if entry_plan is not None and entry_failures is not None and request is not None:
            return self._partial_put_records(handler, request, entry_plan, entry_failures)

        trimmed_through: Optional[int] = None
        if request is not None and operation in ("GetShardIterator", "GetRecords"):
            with self._lock:
                key = (_stream_of(request), request.get("ShardId")) if operation == "GetShardIterator" else shard
                trimmed_through = self._trims.get(key)  # type: ignore[arg-type]
        if trimmed_through is not None and operation == "GetShardIterator":
            kind = request.get("ShardIteratorType")
            if kind in ("AT_SEQUENCE_NUMBER", "AFTER_SEQUENCE_NUMBER") and \
                    int(request.get("StartingSequenceNumber") or 0) <= trimmed_through:
                with self._lock:
                    self._injected[(TRIMMED_POSITION, operation)] += 1
                return _error_reply(400, "InvalidArgumentException",
                                    f"StartingSequenceNumber {request.get('StartingSequenceNumber')} used in "
                                    f"GetShardIterator on shard {request.get('ShardId')} in stream "
                                    f"{_stream_of(request)} is older than the shard's trim horizon")
            if kind == "TRIM_HORIZON":
                body = json.dumps(dict(request, ShardIteratorType="AFTER_SEQUENCE_NUMBER",
                                       StartingSequenceNumber=str(trimmed_through))).encode("utf-8")

        reply = self._forward(handler, operation, body)
        if remember is not None and reply.status == 200:
            with self._lock:
                if remember in self._stale_listings and self._stale_listings[remember] is None:
                    self._stale_listings[remember] = reply
        if trimmed_through is not None and operation == "GetRecords" and reply.status == 200:
            reply = self._stuck_if_trimmed(reply, trimmed_through, str(request.get("ShardIterator")))
        if request is not None and reply.status == 200 and operation in ("GetShardIterator", "GetRecords"):
            self._learn_iterator(operation, request, shard, reply.body)
        return reply

    def _stuck_if_trimmed(self, reply: _Reply, through: int, iterator: str) -> _Reply:
        """A page that would hold a trimmed record: the iterator's position was trimmed; it stays stuck there."""
        try:
            payload = json.loads(reply.body or b"{}")
        except ValueError:
            return reply
        records = payload.get("Records") or []
        if not any(int(r.get("SequenceNumber", 0)) <= through for r in records):
            return reply
        with self._lock:
            self._injected[(TRIMMED_ITERATOR, "GetRecords")] += 1
        return _json_reply(200, {"Records": [], "NextShardIterator": iterator,
                                 "MillisBehindLatest": TRIMMED_ITERATOR_MILLIS_BEHIND})

    def _forward(self, handler: _Handler, operation: str, body: bytes) -> _Reply:
        try:
            return handler.forward(body)
        except (OSError, http.client.HTTPException) as e:
            text = f"{operation}: {type(e).__name__}: {e}"
            _log.warning("FaultProxy could not forward %s", text)
            with self._lock:
                self._upstream_errors.append(text)
            handler.close_connection = True
            return _error_reply(502, "InternalFailure", f"FaultProxy could not reach the server: {e}")

    def _learn_iterator(self, operation: str, request: Dict[str, Any], shard: Shard,
                        response_body: bytes) -> None:
        try:
            response = json.loads(response_body or b"{}")
        except ValueError:
            return
        if operation == "GetShardIterator":
            iterator = response.get("ShardIterator")
            stream, shard_id = _stream_of(request), request.get("ShardId")
            if iterator and stream and shard_id:
                with self._lock:
                    self._iterator_shards[iterator] = (stream, shard_id)
        else:
            iterator = response.get("NextShardIterator")
            if iterator and shard != UNKNOWN_SHARD:
                with self._lock:
                    self._iterator_shards[iterator] = shard  # type: ignore[assignment]

    def _partial_put_records(self, handler: _Handler, request: Dict[str, Any], plan: List[bool],
                             failures: _EntryFailures) -> _Reply:
        """Forwards the entries that are let through, then merges in the injected failures."""
        entries = request.get("Records") or []
        kept = [entry for entry, fail in zip(entries, plan) if not fail]
        upstream_results: List[Dict[str, Any]] = []
        extra: Dict[str, Any] = {}
        if kept:
            subset = dict(request, Records=kept)
            reply = self._forward(handler, "PutRecords", json.dumps(subset, separators=(",", ":")).encode("utf-8"))
            if reply.status != 200:
                return reply  # the whole request failed upstream: the client sees that, nothing to merge
            try:
                response = json.loads(reply.body)
                upstream_results = list(response["Records"])
            except (ValueError, KeyError, TypeError):
                return reply
            if len(upstream_results) != len(kept):
                return _error_reply(500, "InternalFailure",
                                    f"FaultProxy: {len(kept)} entries forwarded, {len(upstream_results)} results")
            extra = {k: v for k, v in response.items() if k not in ("Records", "FailedRecordCount")}

        results: List[Dict[str, Any]] = []
        forwarded = iter(upstream_results)
        for fail in plan:
            if fail:
                results.append({"ErrorCode": failures.error_code, "ErrorMessage": failures.message})
            else:
                results.append(next(forwarded))
        failed = sum(1 for r in results if r.get("ErrorCode"))
        with self._lock:
            self._injected[(FAILED_PUT_ENTRIES, "PutRecords")] += sum(plan)
            self._injected[(PARTIAL_PUT_RECORDS, "PutRecords")] += 1
        return _json_reply(200, {"FailedRecordCount": failed, "Records": results, **extra})


def start(upstream: Any, **options: Any) -> FaultProxy:
    """Starts a FaultProxy in front of ``upstream`` (an endpoint or a LocalKinesis)."""
    return FaultProxy(upstream, **options).start()
