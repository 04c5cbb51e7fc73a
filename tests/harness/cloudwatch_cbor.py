"""CloudWatch's Smithy RPC v2 CBOR protocol in front of moto's CloudWatch, which serves only the Query and JSON 1.0
protocols (getmoto/moto issue 9195) while the AWS SDK for Java speaks CBOR to CloudWatch (2.40.6 and later).

Each ``POST /service/GraniteServiceVersion20100801/operation/<Operation>`` with a CBOR body goes on to moto as the
same operation in JSON 1.0 (``X-Amz-Target``), with the caller's headers (moto reads the service from the signature's
scope); moto's JSON answer comes back as CBOR with its status. Timestamps (CBOR tag 1) travel as epoch seconds, as
JSON 1.0 sends them. Enough for the calls the connector and its tests make (PutMetricData, ListMetrics), not a
general translator. The state is moto's: what was put can be read from moto directly.

Used in-process by the Python suites (``running``) and as a process by the Scala suites
(``python tests/harness/cloudwatch_cbor.py <moto endpoint> <port>``).
"""

from __future__ import annotations

import contextlib
import datetime
import json
import sys
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterator

import cbor2

PREFIX = "/service/GraniteServiceVersion20100801/operation/"
TARGET = "GraniteServiceVersion20100801."
FORWARDED = ("Authorization", "X-Amz-Date", "X-Amz-Security-Token", "User-Agent")


def _to_json(value: Any) -> Any:
    if isinstance(value, datetime.datetime):
        return value.timestamp()
    if isinstance(value, dict):
        return {k: _to_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_to_json(v) for v in value]
    return value


def _handler(moto: str) -> type:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (the http.server API)
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if not self.path.startswith(PREFIX):
                self._answer(404, {"__type": "UnknownOperationException", "message": self.path})
                return
            request = _to_json(cbor2.loads(body)) if body else {}
            headers = {h: self.headers[h] for h in FORWARDED if self.headers.get(h)}
            headers.update({"Content-Type": "application/x-amz-json-1.0",
                            "X-Amz-Target": TARGET + self.path[len(PREFIX):]})
            forward = urllib.request.Request(moto + "/", data=json.dumps(request).encode("utf-8"), headers=headers,
                                             method="POST")
            try:
                with urllib.request.urlopen(forward, timeout=30) as answer:
                    status, text = answer.status, answer.read()
            except urllib.error.HTTPError as e:
                status, text = e.code, e.read()
            self._answer(status, json.loads(text) if text.strip() else {})

        def _answer(self, status: int, payload: Any) -> None:
            data = cbor2.dumps(payload)
            self.send_response(status)
            self.send_header("Content-Type", "application/cbor")
            self.send_header("smithy-protocol", "rpc-v2-cbor")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the http.server API)
            pass

    return Handler


@contextlib.contextmanager
def running(moto: str) -> Iterator[str]:
    """Serve on a free loopback port in a thread of this process; yield its endpoint."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(moto))
    thread = threading.Thread(target=server.serve_forever, name="cloudwatch-cbor", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[2])), _handler(sys.argv[1])).serve_forever()
