"""``dynamodb_stream`` (issue 53): a DynamoDB table's change stream through the Python API, against moto's DynamoDB
and DynamoDB Streams on loopback; the tests marked compat also run on the PySpark 3.5 line, through its own jar. The Scala DynamoDbStreamsSuite covers the triggers, positions, restarts and errors;
this checks the helper, its columns and ``from_dynamodb_json`` on them, with one AvailableNow query over a few dozen
changes; and, through ``harness.dynamodb_reshard`` (moto never ends a shard), a shard that rotates or splits: every
change once, in order per key, a child read only after its parent ended, and children found while a query runs by
DescribeStream's CHILD_SHARDS filter rather than a listing of the stream.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Sequence

import pytest

from harness import moto
from harness.dynamodb_reshard import ReshardingStreams
from harness.waiting import wait_for
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


def _decoded(changes):
    """The item key, the change's kind, the `total` attribute before and after, its sequence number and shard."""
    return changes.select(from_dynamodb_json("keys", "pk STRING").pk.alias("pk"), "eventName",
                          from_dynamodb_json("newImage", "total INT").total.alias("new"),
                          from_dynamodb_json("oldImage", "total INT").total.alias("old"), "sequenceNumber", "shardId")


def _read_available_now(spark, rows, name: str) -> list:
    """The rows an AvailableNow query of ``rows`` writes to the memory table ``name``, on a checkpoint of its own."""
    query = (rows.writeStream.format("memory").queryName(name)
             .option("checkpointLocation", tempfile.mkdtemp(prefix="py-dynamodb-"))
             .trigger(availableNow=True).start())
    try:
        assert query.awaitTermination(180), "the AvailableNow read did not end within 3 minutes"
    finally:
        query.stop()
    assert query.exception() is None, query.exception()
    return spark.table(name).collect()


@pytest.mark.compat
@pytest.mark.heavy
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
    got = _read_available_now(spark, _decoded(changes), "py_dynamodb_changes")
    assert len(got) == len(KEYS) * 3
    assert len({r.sequenceNumber for r in got}) == len(got), "a change was read twice"
    for key in KEYS:
        mine = sorted((r for r in got if r.pk == key), key=lambda r: int(r.sequenceNumber))
        assert [(r.eventName, r.new, r.old) for r in mine] == [
            ("INSERT", 1, None), ("MODIFY", 2, 1), ("REMOVE", None, 2)], key


def test_dynamodb_stream_gives_variant_images_when_asked(spark, dynamodb):
    """``image_column_type="variant"`` through the Python helper: keys and images are VARIANT values that SQL reads
    by path, without a schema (the Scala DynamoDbVariantSuite covers every DynamoDB type)."""
    endpoint, client = dynamodb
    table = _table(client, f"py-variant-{os.getpid()}")
    client.put_item(TableName=table, Item={"pk": {"S": "v1"}, "total": {"N": "12.25"},
                                           "tags": {"SS": ["a", "b"]}, "address": {"M": {"city": {"S": "Lyon"}}}})
    client.put_item(TableName=table, Item={"pk": {"S": "v1"}, "total": {"N": "13"}})

    changes = dynamodb_stream(spark, table, initial_position="trim_horizon", image_column_type="variant",
                              **_options(endpoint))
    assert {f.name: f.dataType.simpleString() for f in changes.schema if f.name in ("keys", "newImage", "oldImage")} \
        == {"keys": "variant", "newImage": "variant", "oldImage": "variant"}
    decoded = changes.selectExpr(
        "eventName", "sequenceNumber", "variant_get(keys, '$.pk', 'string') AS pk",
        "variant_get(newImage, '$.total', 'decimal(10,2)') AS total",
        "variant_get(oldImage, '$.total', 'decimal(10,2)') AS before",
        "variant_get(newImage, '$.address.city', 'string') AS city")
    got = sorted(_read_available_now(spark, decoded, "py_dynamodb_variant"), key=lambda r: int(r.sequenceNumber))
    assert [(r.eventName, r.pk, str(r.total), r.before and str(r.before), r.city) for r in got] == [
        ("INSERT", "v1", "12.25", None, "Lyon"), ("MODIFY", "v1", "13.00", "12.25", None)]


@pytest.mark.compat
@pytest.mark.heavy
def test_dynamodb_stream_names_what_is_missing(spark, dynamodb):
    endpoint, client = dynamodb
    table = _table(client, f"py-no-stream-{os.getpid()}", stream=False)
    with pytest.raises(KinesisStreamNotFoundError, match="StreamEnabled=true,StreamViewType=NEW_AND_OLD_IMAGES"):
        dynamodb_stream(spark, table, **_options(endpoint))
    with pytest.raises(KinesisOptionError, match="either a table or stream_arn"):
        dynamodb_stream(spark, table, stream_arn="arn:aws:dynamodb:us-east-1:123456789012:table/t/stream/x")


# Reshard tests: per key an insert and a modification before the point, two modifications and a delete after it.
RESHARD_KEYS = [f"r{i}" for i in range(6)]
BEFORE = [("INSERT", 1, None), ("MODIFY", 2, 1)]
AFTER = [("MODIFY", 3, 2), ("MODIFY", 4, 3), ("REMOVE", None, 4)]


def _changes_before(client, table: str) -> None:
    for total in (1, 2):
        for key in RESHARD_KEYS:
            client.put_item(TableName=table, Item={"pk": {"S": key}, "total": {"N": str(total)}})


def _changes_after(client, table: str) -> None:
    for total in (3, 4):
        for key in RESHARD_KEYS:
            client.put_item(TableName=table, Item={"pk": {"S": key}, "total": {"N": str(total)}})
    for key in RESHARD_KEYS:
        client.delete_item(TableName=table, Key={"pk": {"S": key}})


def _stream_arn(client, table: str) -> str:
    return client.describe_table(TableName=table)["Table"]["LatestStreamArn"]


def _rows(spark, stream_arn: str, proxy: ReshardingStreams, **options):
    return _decoded(dynamodb_stream(spark, stream_arn=stream_arn, initial_position="trim_horizon",
                                    **dict(_options(proxy.endpoint), **options)))


def _check_resharded(got, parent: str, children: Sequence[str]) -> None:
    """Every change once, in order per key; a key's changes before the point from the parent, after it from one
    child; and the children read only after the parent ended."""
    assert len(got) == len(RESHARD_KEYS) * 5, sorted(got)
    assert len({r.sequenceNumber for r in got}) == len(got), "a change was read twice"
    used = set()
    for key in RESHARD_KEYS:
        mine = sorted((r for r in got if r.pk == key), key=lambda r: int(r.sequenceNumber))
        assert [(r.eventName, r.new, r.old) for r in mine] == BEFORE + AFTER, key
        assert {r.shardId for r in mine[:2]} == {parent}, key
        after = {r.shardId for r in mine[2:]}
        assert len(after) == 1 and after <= set(children), (key, after)
        used |= after
    assert used == set(children), f"children {children}, read from {used}"


def _children_read_after_parent_ended(proxy: ReshardingStreams, parent: str, children: Sequence[str]) -> None:
    """The proxy served no call on a child before the parent's last page."""
    ended = proxy.ended_at(parent)
    assert ended is not None, f"the parent's last page was never served: {proxy.reads()}"
    for child in children:
        first = proxy.first_read(child)
        assert first is not None and first > ended, f"{child} was read before its parent ended: {proxy.reads()}"


@pytest.mark.compat
@pytest.mark.heavy
@pytest.mark.parametrize("children", [1, 2], ids=["rotation", "split"])
def test_dynamodb_stream_reads_a_rotated_or_split_shard(spark, dynamodb, children):
    endpoint, client = dynamodb
    table = _table(client, f"py-reshard-{children}-{os.getpid()}")
    arn = _stream_arn(client, table)
    with ReshardingStreams(endpoint) as proxy:
        _changes_before(client, table)
        parent, kids = proxy.split(arn, children=children)
        _changes_after(client, table)
        got = _read_available_now(spark, _rows(spark, arn, proxy), f"py_dynamodb_reshard_{children}")
        _check_resharded(got, parent, kids)
        _children_read_after_parent_ended(proxy, parent, kids)


@pytest.mark.compat
@pytest.mark.heavy
def test_dynamodb_stream_finds_the_children_of_a_shard_that_ends_while_it_runs(spark, dynamodb):
    endpoint, client = dynamodb
    table = _table(client, f"py-reshard-running-{os.getpid()}")
    arn = _stream_arn(client, table)
    with ReshardingStreams(endpoint) as proxy:
        _changes_before(client, table)
        # No periodic listing within the test: only the lookup of the ended shard's children can find them.
        rows = _rows(spark, arn, proxy, shardDiscoveryInterval="1h")
        query = (rows.writeStream.format("memory").queryName("py_dynamodb_reshard_running")
                 .option("checkpointLocation", tempfile.mkdtemp(prefix="py-dynamodb-running-"))
                 .trigger(processingTime="200 milliseconds").start())
        try:
            def count() -> int:
                if query.exception() is not None:
                    raise AssertionError(query.exception())
                return spark.table("py_dynamodb_reshard_running").count()

            wait_for(lambda: count() == len(RESHARD_KEYS) * 2, 120, "the changes before the split were read")
            listings = proxy.whole_listings()
            parent, kids = proxy.split(arn)
            _changes_after(client, table)
            wait_for(lambda: count() == len(RESHARD_KEYS) * 5, 120, "the changes after the split were read",
                     context=lambda: f"reads {proxy.reads()[-6:]}, child lookups {proxy.child_lookups()}")
        finally:
            query.stop()
        assert query.exception() is None, query.exception()
        _check_resharded(spark.table("py_dynamodb_reshard_running").collect(), parent, kids)
        assert proxy.child_lookups() == [parent], proxy.child_lookups()
        assert proxy.whole_listings() == listings, "the stream was listed whole after the split"
        _children_read_after_parent_ended(proxy, parent, kids)
