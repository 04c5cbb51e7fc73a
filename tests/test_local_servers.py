"""The local Kinesis servers themselves: the suite's servers must outlive misbehaving clients.

A test that SIGKILLs a Spark driver can cut a request in half. kinesalite used to die of that (it rethrows the
request's 'error' event), and every test after it then failed with "connection refused". A driver killed just after
it connected resets a connection the server has not taken yet: kinesis-mock then closed its listening socket (its
process lives on), and on a busy machine (CI) every later client of that server was refused (harness/loopback.js).
"""

from __future__ import annotations

import socket
import struct

import pytest

from harness import local_kinesis, streams


def _cut_a_request_in_half(port: int) -> None:
    """Sends half of a PutRecord body, then resets the connection (what a killed client looks like)."""
    sock = socket.create_connection((local_kinesis.HOST, port), timeout=5)
    try:
        head = (
            "POST / HTTP/1.1\r\nHost: {host}:{port}\r\n"
            "Content-Type: application/x-amz-json-1.1\r\nX-Amz-Target: Kinesis_20131202.PutRecord\r\n"
            "X-Amz-Date: 20000101T000000Z\r\n"
            "Authorization: AWS4-HMAC-SHA256 Credential=t/20000101/us-east-1/kinesis/aws4_request, "
            "SignedHeaders=host;x-amz-date, Signature=00\r\n"
            "Content-Length: 4096\r\n\r\n"
        ).format(host=local_kinesis.HOST, port=port)
        sock.sendall(head.encode() + b'{"StreamName": "s", "Data": "')
        # The server must have taken the headers and be waiting for the body when the reset arrives.
        sock.settimeout(0.5)
        with pytest.raises(socket.timeout):
            sock.recv(1)
    finally:
        _reset(sock)


def _reset_on_connect(port: int) -> None:
    """Connects and resets at once, before the server has taken the connection."""
    _reset(socket.create_connection((local_kinesis.HOST, port), timeout=5))


def _reset(sock: socket.socket) -> None:
    """Closes with a reset, as a killed client's connection ends: SO_LINGER with a zero timeout makes close() send RST
    instead of FIN."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


@pytest.mark.parametrize("kind", local_kinesis.KINDS)
def test_a_client_that_dies_mid_request_does_not_take_the_server_down(kind, tmp_path):
    with local_kinesis.start(kind, workdir=tmp_path) as server:
        for _ in range(3):
            _cut_a_request_in_half(server.port)
            _reset_on_connect(server.port)
        try:
            kinesis = streams.client(server)
            streams.create_stream(kinesis, "survivor", 1)
            kinesis.put_record(StreamName="survivor", Data=b"still here", PartitionKey="k")
        except Exception as e:
            raise AssertionError(f"{kind} (running: {server.is_running()}) no longer serves: {e!r}; its log:\n"
                                 f"{server.log_tail()}") from e
        assert server.is_running(), f"{kind} exited; its log:\n{server.log_tail()}"
        assert kinesis.describe_stream_summary(StreamName="survivor")["StreamDescriptionSummary"]["OpenShardCount"] == 1
