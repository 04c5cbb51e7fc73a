"""The fault-injecting proxy (harness/fault_proxy.py) in front of kinesalite, driven with boto3.

Clients made here do not retry (``max_attempts`` 1), so every injected fault reaches the test.
What really landed is always checked by reading kinesalite directly, not through the proxy.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
from urllib.parse import urlsplit

import pytest
from botocore.exceptions import ClientError

from harness import streams
from harness.fault_fixtures import fault_proxy  # noqa: F401 (pytest fixture)
from harness.fault_proxy import (
    EXPIRED_ITERATOR,
    FAILED_PUT_ENTRIES,
    INTERNAL_FAILURE,
    PARTIAL_PUT_RECORDS,
    THROTTLED_GET_RECORDS,
    THROTTLED_PUT_RECORDS,
    UNKNOWN_SHARD,
    FaultProxy,
)

SHARD0 = "shardId-000000000000"
SHARD1 = "shardId-000000000001"

# kinesalite wants a (syntactically valid, unverified) SigV4 header on every call.
_HEADERS = {
    "X-Amz-Target": "Kinesis_20131202.ListStreams",
    "Content-Type": "application/x-amz-json-1.1",
    "X-Amz-Date": "20000101T000000Z",
    "Authorization": ("AWS4-HMAC-SHA256 Credential=test/20000101/us-east-1/kinesis/aws4_request, "
                      "SignedHeaders=host;x-amz-date, Signature=00"),
}


def _no_retry_client(endpoint):
    # botocore's retries "max_attempts" counts retries; "total_max_attempts" counts the first try too.
    return streams.client(endpoint, retries={"total_max_attempts": 1, "mode": "standard"})


def _direct(proxy):
    """A client that talks to kinesalite itself, bypassing the proxy and its faults."""
    return streams.client(proxy.upstream_endpoint)


def _error(error):
    """(error code, HTTP status) of a ClientError or of pytest's ExceptionInfo around one."""
    response = getattr(error, "value", error).response
    return response["Error"]["Code"], response["ResponseMetadata"]["HTTPStatusCode"]


def _iterator(kinesis, stream, shard_id, kind="TRIM_HORIZON"):
    return kinesis.get_shard_iterator(StreamName=stream, ShardId=shard_id,
                                      ShardIteratorType=kind)["ShardIterator"]


def _entries(count, prefix="r"):
    return [{"Data": f"{prefix}-{i}".encode(), "PartitionKey": f"pk-{i}"} for i in range(count)]


# -- pass-through and counting -------------------------------------------------------------------

def test_pass_through_create_put_and_read(fault_proxy, stream_name):
    kinesis = _no_retry_client(fault_proxy.endpoint)
    streams.create_stream(kinesis, stream_name, 2)
    written = [(f"value-{i}", f"key-{i}") for i in range(50)]
    streams.put_records(kinesis, stream_name, written)

    through_proxy = streams.read_all(kinesis, stream_name)
    direct = streams.read_all(_direct(fault_proxy), stream_name)

    expected = {(d.encode(), k) for d, k in written}
    assert streams.data_set(through_proxy) == expected and len(through_proxy) == 50
    assert [r["sequence_number"] for r in through_proxy] == [r["sequence_number"] for r in direct]
    assert fault_proxy.calls("CreateStream") == 1
    assert fault_proxy.calls("PutRecords") == 1
    assert fault_proxy.calls("GetShardIterator") == 2
    assert fault_proxy.injected_counts() == {}
    assert fault_proxy.upstream_errors() == []


def test_get_records_are_counted_per_shard_and_stream(fault_proxy, stream_name):
    kinesis = _no_retry_client(fault_proxy.endpoint)
    streams.create_stream(kinesis, stream_name, 2)

    # Poll the idle shard 1 five times, following NextShardIterator.
    iterator = _iterator(kinesis, stream_name, SHARD1, "LATEST")
    for _ in range(5):
        response = kinesis.get_records(ShardIterator=iterator)
        assert response["Records"] == []
        iterator = response["NextShardIterator"]
    # Re-using an old iterator still counts for its shard.
    first = _iterator(kinesis, stream_name, SHARD0)
    kinesis.get_records(ShardIterator=first)
    kinesis.get_records(ShardIterator=first)

    assert fault_proxy.get_records_calls_by_shard() == {(stream_name, SHARD1): 5, (stream_name, SHARD0): 2}
    assert fault_proxy.get_records_calls_by_stream() == {stream_name: 7}
    assert fault_proxy.calls_by_shard("GetRecords") == fault_proxy.get_records_calls_by_shard()
    assert fault_proxy.calls_by_shard("GetShardIterator") == {(stream_name, SHARD1): 1, (stream_name, SHARD0): 1}
    assert fault_proxy.calls("GetRecords") == 7


def test_iterators_handed_out_elsewhere_count_as_unknown_shard(fault_proxy, stream_name):
    direct = _direct(fault_proxy)
    streams.create_stream(direct, stream_name, 1)
    iterator = _iterator(direct, stream_name, SHARD0)  # not seen by the proxy

    _no_retry_client(fault_proxy.endpoint).get_records(ShardIterator=iterator)

    assert fault_proxy.get_records_calls_by_shard() == {UNKNOWN_SHARD: 1}


def test_put_records_requests_record_entry_count_and_bytes(fault_proxy, stream_name):
    kinesis = _no_retry_client(fault_proxy.endpoint)
    streams.create_stream(kinesis, stream_name, 1)
    kinesis.put_records(StreamName=stream_name, Records=[
        {"Data": b"\x00" * 100, "PartitionKey": "abc"},
        {"Data": b"hello", "PartitionKey": "\u00e9"},  # a 2-byte partition key in UTF-8
    ])
    kinesis.put_records(StreamName=stream_name, Records=[{"Data": b"x", "PartitionKey": "k"}])

    assert fault_proxy.put_records_requests() == [(2, 100 + 3 + 5 + 2), (1, 2)]
    entry_count, total_bytes = fault_proxy.put_records_requests()[1]
    assert (entry_count, total_bytes) == (1, 2)


def test_concurrent_clients_are_all_counted(fault_proxy, stream_name):
    kinesis = _no_retry_client(fault_proxy.endpoint)
    streams.create_stream(kinesis, stream_name, 1)
    iterator = _iterator(kinesis, stream_name, SHARD0)
    errors = []

    def poll():
        try:
            for _ in range(10):
                kinesis.get_records(ShardIterator=iterator)
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=poll) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors and not any(t.is_alive() for t in threads)
    assert fault_proxy.get_records_calls_by_shard() == {(stream_name, SHARD0): 80}
    assert fault_proxy.wait_for_calls("GetRecords", 80, timeout=1) == 80


# -- injected faults -----------------------------------------------------------------------------

def test_throttled_get_records_arrive_as_provisioned_throughput_exceeded(fault_proxy, stream_name):
    kinesis = _no_retry_client(fault_proxy.endpoint)
    streams.create_stream(kinesis, stream_name, 1)
    iterator = _iterator(kinesis, stream_name, SHARD0)
    fault_proxy.throttle_get_records(1.0)

    with pytest.raises(ClientError) as excinfo:
        kinesis.get_records(ShardIterator=iterator)

    assert _error(excinfo) == ("ProvisionedThroughputExceededException", 400)
    assert fault_proxy.injected(THROTTLED_GET_RECORDS) == 1
    assert fault_proxy.calls("GetRecords") == 1
    fault_proxy.clear_faults()
    assert kinesis.get_records(ShardIterator=iterator)["Records"] == []


def _throttle_pattern(proxy, kinesis, iterator, calls):
    pattern = []
    for _ in range(calls):
        try:
            kinesis.get_records(ShardIterator=iterator)
            pattern.append(False)
        except ClientError as e:
            assert e.response["Error"]["Code"] == "ProvisionedThroughputExceededException"
            pattern.append(True)
    return pattern


def test_throttle_rate_is_seeded_and_counted(fault_proxy, stream_name):
    kinesis = _no_retry_client(fault_proxy.endpoint)
    streams.create_stream(kinesis, stream_name, 1)
    iterator = _iterator(kinesis, stream_name, SHARD0)

    fault_proxy.throttle_get_records(0.5, seed=42)
    first = _throttle_pattern(fault_proxy, kinesis, iterator, 40)
    fault_proxy.throttle_get_records(0.5, seed=42)  # the same rule again restarts its random sequence
    second = _throttle_pattern(fault_proxy, kinesis, iterator, 40)

    assert first == second
    assert 5 < sum(first) < 35
    assert fault_proxy.injected(THROTTLED_GET_RECORDS) == 2 * sum(first)
    assert fault_proxy.calls("GetRecords") == 80


def test_throttled_put_records_write_nothing(fault_proxy, stream_name):
    kinesis = _no_retry_client(fault_proxy.endpoint)
    streams.create_stream(kinesis, stream_name, 2)
    fault_proxy.throttle_put_records(1.0)

    with pytest.raises(ClientError) as excinfo:
        kinesis.put_records(StreamName=stream_name, Records=_entries(10))

    assert _error(excinfo) == ("ProvisionedThroughputExceededException", 400)
    assert fault_proxy.injected(THROTTLED_PUT_RECORDS) == 1
    assert fault_proxy.put_records_requests() == [(10, sum(len(f"r-{i}") + len(f"pk-{i}") for i in range(10)))]
    assert streams.read_all(_direct(fault_proxy), stream_name) == []


def test_partial_put_failures_write_exactly_the_other_entries(fault_proxy, stream_name):
    kinesis = _no_retry_client(fault_proxy.endpoint)
    streams.create_stream(kinesis, stream_name, 3)
    fault_proxy.fail_put_entries(0.4, seed=3)
    entries = _entries(100)

    response = kinesis.put_records(StreamName=stream_name, Records=entries)

    results = response["Records"]
    assert len(results) == 100
    failed = [i for i, r in enumerate(results) if "ErrorCode" in r]
    assert 10 < len(failed) < 90
    assert response["FailedRecordCount"] == len(failed) == fault_proxy.injected(FAILED_PUT_ENTRIES)
    assert fault_proxy.injected(PARTIAL_PUT_RECORDS) == 1
    for i in failed:
        assert results[i]["ErrorCode"] == "ProvisionedThroughputExceededException"
        assert results[i]["ErrorMessage"]
        assert "SequenceNumber" not in results[i] and "ShardId" not in results[i]

    landed = streams.read_all(_direct(fault_proxy), stream_name)
    assert len(landed) == 100 - len(failed)
    by_sequence = {r["sequence_number"]: (r["data"], r["partition_key"], r["shard_id"]) for r in landed}
    for i, result in enumerate(results):
        if i in failed:
            continue
        # Each success is reported at its own entry's position, with the real sequence number.
        expected = (entries[i]["Data"], entries[i]["PartitionKey"], result["ShardId"])
        assert by_sequence[result["SequenceNumber"]] == expected


def test_every_entry_failing_forwards_nothing(fault_proxy, stream_name):
    kinesis = _no_retry_client(fault_proxy.endpoint)
    streams.create_stream(kinesis, stream_name, 1)
    fault_proxy.fail_put_entries(1.0)

    response = kinesis.put_records(StreamName=stream_name, Records=_entries(7))

    assert response["FailedRecordCount"] == 7
    assert all(r["ErrorCode"] == "ProvisionedThroughputExceededException" for r in response["Records"])
    assert streams.read_all(_direct(fault_proxy), stream_name) == []


def test_partial_failures_with_retries_land_every_record_once(fault_proxy, stream_name):
    kinesis = _no_retry_client(fault_proxy.endpoint)
    streams.create_stream(kinesis, stream_name, 2)
    fault_proxy.fail_put_entries(0.3, seed=11, max_count=40)

    streams.put_records(kinesis, stream_name, [(f"v{i}", f"k{i}") for i in range(200)])

    assert 0 < fault_proxy.injected(FAILED_PUT_ENTRIES) <= 40
    landed = streams.read_all(_direct(fault_proxy), stream_name)
    assert sorted(r["data"] for r in landed) == sorted(f"v{i}".encode() for i in range(200))


def test_expired_iterators_on_every_nth_get_records(fault_proxy, stream_name):
    kinesis = _no_retry_client(fault_proxy.endpoint)
    streams.create_stream(kinesis, stream_name, 1)
    iterator = _iterator(kinesis, stream_name, SHARD0)
    fault_proxy.expire_iterator_every(3)

    outcomes = []
    for _ in range(7):
        try:
            iterator = kinesis.get_records(ShardIterator=iterator)["NextShardIterator"]
            outcomes.append("ok")
        except ClientError as e:
            outcomes.append(_error(e))

    expired = ("ExpiredIteratorException", 400)
    assert outcomes == ["ok", "ok", expired, "ok", "ok", expired, "ok"]
    assert fault_proxy.injected(EXPIRED_ITERATOR) == 2


def test_expired_iterator_on_chosen_calls_of_one_shard(fault_proxy, stream_name):
    kinesis = _no_retry_client(fault_proxy.endpoint)
    streams.create_stream(kinesis, stream_name, 2)
    iterators = {shard: _iterator(kinesis, stream_name, shard) for shard in (SHARD0, SHARD1)}
    fault_proxy.expire_iterator_on_calls([2], shard=(stream_name, SHARD1))

    failures = []
    for round_number in range(3):
        for shard in (SHARD0, SHARD1):
            try:
                kinesis.get_records(ShardIterator=iterators[shard])
            except ClientError as e:
                assert e.response["Error"]["Code"] == "ExpiredIteratorException"
                failures.append((round_number, shard))

    assert failures == [(1, SHARD1)]
    assert fault_proxy.get_records_calls_by_shard() == {(stream_name, SHARD0): 3, (stream_name, SHARD1): 3}


def test_internal_failure_and_other_errors(fault_proxy, stream_name):
    kinesis = _no_retry_client(fault_proxy.endpoint)
    streams.create_stream(kinesis, stream_name, 1)
    fault_proxy.internal_failure("ListShards", 1.0)
    fault_proxy.inject_error("DescribeStreamSummary", "LimitExceededException", max_count=1)

    with pytest.raises(ClientError) as excinfo:
        kinesis.list_shards(StreamName=stream_name)
    assert _error(excinfo) == ("InternalFailure", 500)
    with pytest.raises(ClientError) as excinfo:
        kinesis.describe_stream_summary(StreamName=stream_name)
    assert _error(excinfo) == ("LimitExceededException", 400)
    # max_count=1: the next call goes through.
    assert kinesis.describe_stream_summary(StreamName=stream_name)["StreamDescriptionSummary"]["StreamName"] == stream_name

    assert fault_proxy.injected(INTERNAL_FAILURE) == 1
    assert fault_proxy.injected(INTERNAL_FAILURE, "ListShards") == 1
    assert fault_proxy.injected("LimitExceededException") == 1
    fault_proxy.clear_faults()
    assert [s["ShardId"] for s in kinesis.list_shards(StreamName=stream_name)["Shards"]] == [SHARD0]


def test_error_answers_carry_the_code_in_body_and_header(fault_proxy):
    fault_proxy.throttle_get_records(1.0)
    port = urlsplit(fault_proxy.endpoint).port
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("POST", "/", body=json.dumps({"ShardIterator": "x"}),
                     headers=dict(_HEADERS, **{"X-Amz-Target": "Kinesis_20131202.GetRecords"}))
        response = conn.getresponse()
        body = json.loads(response.read())
    finally:
        conn.close()
    assert response.status == 400
    assert response.getheader("x-amzn-ErrorType") == "ProvisionedThroughputExceededException"
    assert body["__type"] == "ProvisionedThroughputExceededException" and body["message"]


# -- HTTP behaviour ------------------------------------------------------------------------------

def _list_streams_head(*extra_headers):
    lines = ["POST / HTTP/1.1", "Host: kinesis", *(f"{k}: {v}" for k, v in _HEADERS.items()), *extra_headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _read_response(sock):
    response = http.client.HTTPResponse(sock)
    response.begin()
    return response.status, json.loads(response.read())


def test_keep_alive_expect_continue_and_chunked_bodies(fault_proxy):
    port = urlsplit(fault_proxy.endpoint).port
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        # 1. Expect: 100-continue: the proxy asks for the body before it answers.
        sock.sendall(_list_streams_head("Expect: 100-continue", "Content-Length: 2"))
        interim = b""
        while b"\r\n\r\n" not in interim:
            chunk = sock.recv(1)
            assert chunk, "the proxy closed the connection"
            interim += chunk
        assert interim.startswith(b"HTTP/1.1 100")
        sock.sendall(b"{}")
        assert _read_response(sock)[0] == 200
        # 2. The same connection again, with a chunked body.
        sock.sendall(_list_streams_head("Transfer-Encoding: chunked") + b"1\r\n{\r\n1\r\n}\r\n0\r\n\r\n")
        status, body = _read_response(sock)
        assert status == 200 and "StreamNames" in body
    assert fault_proxy.calls("ListStreams") == 2


def test_upstream_connection_closed_meanwhile_is_reopened(fault_proxy):
    kinesis = _no_retry_client(fault_proxy.endpoint)
    kinesis.list_streams()
    # Break the proxy's kept-alive connection to kinesalite, as an idle timeout on the server would.
    for sock in list(fault_proxy._upstream_sockets):
        sock.shutdown(socket.SHUT_RDWR)
    kinesis.list_streams()
    assert fault_proxy.calls("ListStreams") == 2
    assert fault_proxy.upstream_errors() == []


def test_stop_closes_the_port_and_open_connections(kinesalite_server):
    proxy = FaultProxy(kinesalite_server).start()
    port = proxy.port
    client = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    client.request("POST", "/", body=b"{}", headers=_HEADERS)
    assert client.getresponse().read()
    proxy.stop()
    proxy.stop()  # idempotent
    assert not proxy.is_running()
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    # The kept-alive connection was closed by the proxy.
    assert client.sock is not None and client.sock.recv(1) == b""
    client.close()
