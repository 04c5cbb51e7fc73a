"""The sink with STS AssumeRole against moto's STS server on loopback, through the source's options.

The local Kinesis servers accept any signature, so what proves the role was assumed is moto's own record of
the AssumeRole calls (``/moto-api/data.json``): the role, the session name and the external id the options
gave. An STS endpoint that does not answer makes the write fail instead of falling back to the base keys.
"""

from __future__ import annotations

import json
import os
import time
import urllib.request
from pathlib import Path

import pytest

from conftest import connector_options
from harness import moto, streams

from spark_kinesis import read_kinesis

ROLE_ARN = "arn:aws:iam::123456789012:role/kinesis-writer"


@pytest.fixture(scope="module")
def moto_sts(tmp_path_factory):
    """moto's server on a free loopback port; yields its endpoint; stopped by PID."""
    with moto.running(Path(tmp_path_factory.mktemp("moto"))) as endpoint:
        yield endpoint


def _assumed_roles(endpoint):
    data = json.load(urllib.request.urlopen(f"{endpoint}/moto-api/data.json", timeout=10))
    return data.get("sts", {}).get("AssumedRole", [])


def _role_options(server, sts_endpoint, session):
    return dict(connector_options(server), roleArn=ROLE_ARN, roleSessionName=session,
                roleExternalId="sink-test-external-id", stsEndpointUrl=sts_endpoint)


def test_sink_and_source_assume_the_role(spark, kinesalite_server, moto_sts, stream_name):
    kinesis = streams.client(kinesalite_server)
    streams.create_stream(kinesis, stream_name, 1)
    session = f"sink-{os.getpid()}-{time.monotonic_ns()}"
    options = _role_options(kinesalite_server, moto_sts, session)

    spark.range(50).selectExpr("CAST(id AS STRING) AS data", "'k' AS partitionKey") \
        .write.format("kinesis").options(**options, streamName=stream_name).mode("append").save()

    roles = [r for r in _assumed_roles(moto_sts) if r["session_name"] == session]
    assert roles, "the sink never called AssumeRole"
    assert all(r["role_arn"] == ROLE_ARN and r["external_id"] == "sink-test-external-id" for r in roles)
    assert sorted(int(r["data"]) for r in streams.read_all(kinesis, stream_name)) == list(range(50))
    # The very same options read the stream back.
    assert read_kinesis(spark, stream_name, **options).count() == 50


def test_unreachable_sts_fails_the_write(spark, kinesalite_server, stream_name):
    """Issue 13.5: with the sink's defaults (a 2-minute maxRetryDuration), an STS that never answered ends the
    write after 3 s of retries (it took 26 s with maxRetries=2), naming the STS endpoint and the role."""
    streams.create_stream(streams.client(kinesalite_server), stream_name, 1)
    sts = f"http://127.0.0.1:{moto.free_port()}"
    options = _role_options(kinesalite_server, sts, "unreachable")
    df = spark.createDataFrame([("a", "k")], "data string, partitionKey string")
    start = time.monotonic()
    with pytest.raises(Exception) as err:
        df.write.format("kinesis").options(**options, streamName=stream_name).mode("append").save()
    seconds = time.monotonic() - start
    message = str(err.value)
    assert (f"[KINESIS_ENDPOINT_UNREACHABLE] Cannot connect to the STS endpoint {sts} (region 'us-east-1'), to "
            f"assume role {ROLE_ARN} for PutRecords on stream '{stream_name}': ConnectException: Connection refused"
            ) in message, message[:2000]
    # A guard against waiting out the normal budgets (3 to 8 s on an idle machine): the condition proves the first-
    # contact budget applied, and FastFailureSuite checks its length on a virtual clock.
    assert seconds < 60, f"{seconds:.1f} s"
    assert streams.read_all(streams.client(kinesalite_server), stream_name) == []
