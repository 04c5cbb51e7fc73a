#!/usr/bin/env python3
"""How late kinesis-mock itself delivers records by SubscribeToShard, without the connector or the AWS SDK (not part
of CI). docs/performance.md, "Enhanced fan-out against polling", uses it to tell the server's share of the latency.

A consumer subscribes with curl over h2c (HTTP/2 without TLS) while one record is put every --period seconds; each
record's delay is the time from its PutRecord acknowledgement to the moment curl hands over the bytes holding it.

    .venv/bin/python bench/efo/server_latency.py [--records 12] [--period 0.7]

Needs curl built with HTTP/2 (nghttp2).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import re
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "source"))

from common import local_server  # noqa: E402
from harness import local_kinesis, streams  # noqa: E402


def consumer(kinesis, stream: str) -> str:
    """Registers a consumer on `stream` and waits until it is ACTIVE; returns its ARN."""
    arn = kinesis.describe_stream_summary(StreamName=stream)["StreamDescriptionSummary"]["StreamARN"]
    consumer_arn = kinesis.register_stream_consumer(StreamARN=arn, ConsumerName="latency")["Consumer"]["ConsumerARN"]
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if kinesis.describe_stream_consumer(ConsumerARN=consumer_arn)["ConsumerDescription"]["ConsumerStatus"] == \
                "ACTIVE":
            return consumer_arn
        time.sleep(0.1)
    raise SystemExit("the consumer did not become ACTIVE in 30 s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=12)
    parser.add_argument("--period", type=float, default=0.7)
    args = parser.parse_args()
    with local_server(local_kinesis.KINESIS_MOCK) as (server, kinesis):
        streams.create_stream(kinesis, "latency", 1)
        shard = kinesis.list_shards(StreamName="latency")["Shards"][0]["ShardId"]
        body = json.dumps({"ConsumerARN": consumer(kinesis, "latency"), "ShardId": shard,
                           "StartingPosition": {"Type": "LATEST"}})
        # kinesis-mock checks that a signature is there, not what it says.
        curl = subprocess.Popen(
            ["curl", "-sN", "--http2-prior-knowledge", "-X", "POST", server.endpoint + "/", "--data", body,
             "-H", "X-Amz-Target: Kinesis_20131202.SubscribeToShard", "-H", "Content-Type: application/x-amz-json-1.1",
             "-H", "X-Amz-Date: 20260101T000000Z", "-H", "Authorization: AWS4-HMAC-SHA256 "
             "Credential=bench/20260101/us-east-1/kinesis/aws4_request, SignedHeaders=host, Signature=00"],
            stdout=subprocess.PIPE, bufsize=0)
        os.set_blocking(curl.stdout.fileno(), False)
        acked: dict = {}

        def write() -> None:
            time.sleep(2)  # the subscription is open
            for i in range(args.records):
                kinesis.put_record(StreamName="latency", Data=f"m{i:04d}".encode(), PartitionKey="k")
                acked[f"m{i:04d}"] = time.time()
                time.sleep(args.period)

        threading.Thread(target=write, daemon=True).start()
        delays = {}
        deadline = time.monotonic() + 2 + args.records * args.period + 5
        try:
            while time.monotonic() < deadline and len(delays) < args.records:
                try:
                    chunk = curl.stdout.read(65536)
                except BlockingIOError:
                    chunk = None
                now = time.time()
                for data in re.findall(rb'"Data":"([^"]+)"', chunk or b""):
                    name = base64.b64decode(data).decode()
                    if name in acked:
                        delays[name] = (now - acked[name]) * 1000
                time.sleep(0.005)
        finally:
            curl.kill()
            curl.wait()
    if not delays:
        raise SystemExit("no record came through the subscription")
    ms = sorted(delays.values())
    print(f"{len(ms)} of {args.records} records; put to delivery (ms): min {ms[0]:.0f}, "
          f"median {statistics.median(ms):.0f}, max {ms[-1]:.0f}")


if __name__ == "__main__":
    main()
