"""``dynamodb_stream`` (issue 53, first slice): a DynamoDB table's change stream through the Python API, against
moto's DynamoDB and DynamoDB Streams on loopback. The Scala DynamoDbStreamsSuite covers the triggers, positions,
restarts and errors; this checks the helper, its columns and ``from_dynamodb_json`` on them, with one AvailableNow
query over a few dozen changes.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from harness import moto
from spark_kinesis import dynamodb_stream, from_dynamodb_json
from spark_kinesis.errors import KinesisOptionError, KinesisStreamNotFoundError

boto3 = pytest.importorskip("boto3")

KEYS = [f"k{i}" for i in range(8)]


@pytest.fixture(scope="module")
def dynamodb(tmp_path_factory):
    """moto's endpoint and a boto3 DynamoDB client for it, for this module."""
    with moto.running(Path(tmp_path_factory.mktemp("moto-dynamodb"))) as endpoint:
        client = boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-east-1",
                              aws_access_key_id="local-test-key", aws_secret_access_key="local-test-secret")
        yield endpoint, client


def _options(endpoint: str) -> dict:
    return dict(endpoint_url=endpoint, region="us-east-1", awsAccessKeyId="local-test-key",
                awsSecretKey="local-test-secret", minFetchPeriod="50ms", idleFetchPeriod="200ms")


def _table(client, name: str, stream: bool = True) -> str:
    spec = {"StreamSpecification": {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}} if stream else {}
    client.create_table(TableName=name, KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                        BillingMode="PAY_PER_REQUEST", **spec)
    return name


def test_dynamodb_stream_reads_every_change_in_order_per_key(spark, dynamodb):
    endpoint, client = dynamodb
    table = _table(client, f"py-orders-{os.getpid()}")
    for key in KEYS:
        client.put_item(TableName=table, Item={"pk": {"S": key}, "total": {"N": "1"}})
    for key in KEYS:
        client.put_item(TableName=table, Item={"pk": {"S": key}, "total": {"N": "2"}})
    for key in KEYS:
        client.delete_item(TableName=table, Key={"pk": {"S": key}})

    changes = dynamodb_stream(spark, table, initial_position="trim_horizon", **_options(endpoint))
    assert changes.isStreaming
    assert changes.columns == ["eventID", "eventName", "approximateCreationDateTime", "sequenceNumber", "sizeBytes",
                               "streamViewType", "shardId", "userIdentity", "keys", "newImage", "oldImage"]
    rows = changes.select(from_dynamodb_json("keys", "pk STRING").pk.alias("pk"), "eventName",
                          from_dynamodb_json("newImage", "total INT").total.alias("new"),
                          from_dynamodb_json("oldImage", "total INT").total.alias("old"), "sequenceNumber")
    query = (rows.writeStream.format("memory").queryName("py_dynamodb_changes")
             .option("checkpointLocation", tempfile.mkdtemp(prefix="py-dynamodb-"))
             .trigger(availableNow=True).start())
    try:
        assert query.awaitTermination(180), "the AvailableNow read did not end within 3 minutes"
    finally:
        query.stop()
    assert query.exception() is None, query.exception()
    got = spark.table("py_dynamodb_changes").collect()
    assert len(got) == len(KEYS) * 3
    assert len({r.sequenceNumber for r in got}) == len(got), "a change was read twice"
    for key in KEYS:
        mine = sorted((r for r in got if r.pk == key), key=lambda r: int(r.sequenceNumber))
        assert [(r.eventName, r.new, r.old) for r in mine] == [
            ("INSERT", 1, None), ("MODIFY", 2, 1), ("REMOVE", None, 2)], key


def test_dynamodb_stream_names_what_is_missing(spark, dynamodb):
    endpoint, client = dynamodb
    table = _table(client, f"py-no-stream-{os.getpid()}", stream=False)
    with pytest.raises(KinesisStreamNotFoundError, match="StreamEnabled=true,StreamViewType=NEW_AND_OLD_IMAGES"):
        dynamodb_stream(spark, table, **_options(endpoint))
    with pytest.raises(KinesisOptionError, match="either a table or stream_arn"):
        dynamodb_stream(spark, table, stream_arn="arn:aws:dynamodb:us-east-1:123456789012:table/t/stream/x")
