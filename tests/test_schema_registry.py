"""Typed payloads (issue 38): Glue Schema Registry Avro, decoded and encoded, against moto's Glue on loopback.

The wire format is checked by a library we did not write: records framed by the ``aws-glue-schema-registry``
package (PyPI) are decoded by the connector, and records the connector encodes are decoded by that package. The
round trips go through a local Kinesis server: the sink writes framed records, the source reads them back.
"""

from __future__ import annotations

import io
import json
import os
import re
import uuid
from pathlib import Path

import fastavro
import pytest
from aws_schema_registry import DataAndSchema, KafkaDeserializer, KafkaSerializer, SchemaRegistryClient
from aws_schema_registry.avro import AvroSchema
from aws_schema_registry.jsonschema import JsonSchema
from aws_schema_registry.codec import encode as frame
from pyspark.sql import functions as F

from conftest import connector_options
from harness import moto, streams
from harness.waiting import QUERY_END_S

from spark_kinesis import from_glue_schema_registry, read_kinesis, to_glue_schema_registry, write_kinesis
from spark_kinesis.errors import KinesisDecodeError, KinesisOptionError, KinesisSchemaError, \
    KinesisSchemaRegistryError, from_exception

ORDER_V1 = {"type": "record", "name": "Order", "namespace": "shop", "fields": [
    {"name": "id", "type": "long"},
    {"name": "customer", "type": "string"},
    {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}},
    {"name": "placed", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    {"name": "note", "type": ["null", "string"], "default": None},
]}
# v2 drops `note` and adds `channel` with a default: records of v1 read as v2 get the default.
ORDER_V2 = {"type": "record", "name": "Order", "namespace": "shop", "fields": [
    {"name": "id", "type": "long"},
    {"name": "customer", "type": "string"},
    {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}},
    {"name": "placed", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    {"name": "channel", "type": "string", "default": "web"},
]}


@pytest.fixture(scope="module")
def glue(tmp_path_factory):
    """moto's Glue: its endpoint, a client and a registry of this module's own."""
    with moto.glue_registry(Path(tmp_path_factory.mktemp("moto-glue")), f"shop-{os.getpid()}") as glue_and_registry:
        yield glue_and_registry


def _registry_options(glue, **extra):
    endpoint, _, registry = glue
    return dict(registryEndpointUrl=endpoint, region="us-east-1", awsAccessKeyId="local-test-key",
                awsSecretKey="local-test-secret", registryName=registry, **extra)


def _serializer(glue):
    _, client, registry = glue
    return SchemaRegistryClient(client, registry_name=registry, wait_interval_seconds=0.05)


def _order(i, with_note=True):
    order = {"id": i, "customer": f"c{i % 7}", "amount": __import__("decimal").Decimal(f"{i}.{i % 100:02d}"),
             "placed": 1_700_000_000_000 + i}
    if with_note:
        order["note"] = None if i % 3 else f"note {i}"
    return order


def _framed_by_pypi(glue, topic, schema, orders, compressed=False):
    """Orders framed by the PyPI serializer (and, compressed, re-framed with its codec and zlib)."""
    serializer = KafkaSerializer(_serializer(glue))
    out = []
    for o in orders:
        payload = serializer.serialize(topic, DataAndSchema(o, AvroSchema(schema)))
        if compressed:
            body, version = payload[18:], uuid.UUID(bytes=payload[2:18])
            payload = frame(body, version, compression=True)
        out.append(payload)
    return out


def _put(server, stream, payloads):
    kinesis = streams.client(server)
    streams.put_records(kinesis, stream, [{"Data": p, "PartitionKey": f"k{i % 5}"} for i, p in enumerate(payloads)])


@pytest.mark.compat
@pytest.mark.heavy  # once per jar: on the default PySpark and on 3.5
def test_records_of_two_versions_decode_to_one_shape_in_batch_and_micro_batch(
        spark, kinesalite_server, glue, stream_name, tmp_path):
    topic = f"orders-{uuid.uuid4().hex[:8]}"
    streams.create_stream(streams.client(kinesalite_server), stream_name, 2)
    v1 = [_order(i) for i in range(40)]
    v2 = [dict(_order(i, with_note=False), channel="app") for i in range(40, 80)]
    _put(kinesalite_server, stream_name,
         _framed_by_pypi(glue, topic, ORDER_V1, v1) + _framed_by_pypi(glue, topic, ORDER_V2, v2, compressed=True))
    options = _registry_options(glue, schemaName=f"{topic}-value")  # the latest version: v2

    def expected(o):
        return (o["id"], o["customer"], str(o["amount"]), o["placed"] * 1000, o.get("channel", "web"))

    def check(rows):
        got = sorted((r.id, r.customer, str(r.amount), r.placed_micros, r.channel) for r in rows)
        assert got == sorted(expected(o) for o in v1 + v2)

    def project(df):
        return df.select(from_glue_schema_registry("data", options).alias("o")).select(
            "o.id", "o.customer", F.col("o.amount").cast("string").alias("amount"),
            F.expr("unix_micros(o.placed)").alias("placed_micros"), "o.channel")

    batch = read_kinesis(spark, stream_name, **connector_options(kinesalite_server))
    check(project(batch).collect())
    assert [f.name for f in project(batch).schema.fields] == ["id", "customer", "amount", "placed_micros", "channel"]

    stream = (spark.readStream.format("kinesis").options(**connector_options(kinesalite_server))
              .option("streamName", stream_name).option("initialPosition", "trim_horizon").load())
    query = (project(stream).writeStream.format("memory").queryName("gsr_" + stream_name.replace("-", "_"))
             .option("checkpointLocation", str(tmp_path / "cp")).trigger(availableNow=True).start())
    assert query.awaitTermination(QUERY_END_S), "the AvailableNow query did not end"
    assert query.exception() is None
    check(spark.table(query.name).collect())


@pytest.mark.compat
@pytest.mark.heavy  # once per jar: on the default PySpark and on 3.5
def test_encoded_by_the_sink_decoded_by_the_pypi_deserializer_and_by_the_source(
        spark, kinesalite_server, glue, stream_name, tmp_path):
    topic = f"sink-{uuid.uuid4().hex[:8]}"
    kinesis = streams.client(kinesalite_server)
    streams.create_stream(kinesis, stream_name, 2)
    schema = json.dumps(ORDER_V1)
    rows = spark.range(60).selectExpr(
        "id", "concat('c', id % 7) AS customer", "CAST(id * 1.25 AS DECIMAL(10, 2)) AS amount",
        "timestamp_millis(1700000000000 + id) AS placed", "IF(id % 2 = 0, NULL, concat('n', id)) AS note")
    options = _registry_options(glue, schemaName=f"{topic}-value", autoRegistration=True, compression="zlib")
    framed = rows.select(to_glue_schema_registry(F.struct(*rows.columns), schema, options).alias("data"),
                         F.col("id").cast("string").alias("partitionKey"))
    write_kinesis(framed, stream_name, **connector_options(kinesalite_server))

    # The schema was registered (autoRegistration), and every record is zlib-framed with its version id.
    _, client, registry = glue
    version = client.get_schema_by_definition(SchemaId={"RegistryName": registry, "SchemaName": f"{topic}-value"},
                                              SchemaDefinition=schema)["SchemaVersionId"]
    payloads = [r["data"] for r in streams.read_all(kinesis, stream_name)]
    assert len(payloads) == 60
    assert all(p[0] == 3 and p[1] == 5 and uuid.UUID(bytes=p[2:18]) == uuid.UUID(version) for p in payloads)

    deserializer = KafkaDeserializer(_serializer(glue))
    decoded = sorted((d.data["id"], d.data["customer"], str(d.data["amount"]), d.data["note"])
                     for d in (deserializer.deserialize(topic, p) for p in payloads))
    assert decoded == [(i, f"c{i % 7}", f"{i * 1.25:.2f}", None if i % 2 == 0 else f"n{i}") for i in range(60)]

    # Read back by the source and decoded, in batch and in micro-batches.
    typed = [(i, f"c{i % 7}", None if i % 2 == 0 else f"n{i}") for i in range(60)]
    decode = from_glue_schema_registry("data", _registry_options(glue, schemaName=f"{topic}-value")).alias("o")
    back = read_kinesis(spark, stream_name, **connector_options(kinesalite_server)).select(decode)
    assert sorted(tuple(r) for r in back.select("o.id", "o.customer", "o.note").collect()) == typed
    stream = (spark.readStream.format("kinesis").options(**connector_options(kinesalite_server))
              .option("streamName", stream_name).option("initialPosition", "trim_horizon").load())
    query = (stream.select(decode).select("o.id", "o.customer", "o.note").writeStream.format("memory")
             .queryName("gsr_back_" + stream_name.replace("-", "_"))
             .option("checkpointLocation", str(tmp_path / "cp")).trigger(availableNow=True).start())
    assert query.awaitTermination(QUERY_END_S), "the AvailableNow query did not end"
    assert query.exception() is None
    assert sorted(tuple(r) for r in spark.table(query.name).collect()) == typed


@pytest.mark.compat
@pytest.mark.heavy  # once per jar: on the default PySpark and on 3.5
def test_plain_avro_without_a_header_decodes_with_the_schema_given(spark, kinesalite_server, stream_name):
    streams.create_stream(streams.client(kinesalite_server), stream_name, 1)
    parsed = fastavro.parse_schema(ORDER_V2)
    orders = [dict(_order(i, with_note=False), channel="pos") for i in range(25)]
    payloads = []
    for o in orders:
        buffer = io.BytesIO()
        fastavro.schemaless_writer(buffer, parsed, o)
        payloads.append(buffer.getvalue())
    _put(kinesalite_server, stream_name, payloads)
    options = {"schemaDefinition": json.dumps(ORDER_V2), "framing": "none", "region": "us-east-1"}
    df = read_kinesis(spark, stream_name, **connector_options(kinesalite_server))
    got = df.select(from_glue_schema_registry(F.col("data"), options).alias("o")).select("o.id", "o.channel")
    assert sorted(tuple(r) for r in got.collect()) == [(i, "pos") for i in range(25)]


@pytest.mark.compat
@pytest.mark.heavy
def test_failfast_names_the_row_and_the_version_and_permissive_keeps_going(spark, glue):
    _, client, registry = glue
    name = f"bad-{uuid.uuid4().hex[:8]}"
    version = client.create_schema(RegistryId={"RegistryName": registry}, SchemaName=name, DataFormat="AVRO",
                                   Compatibility="BACKWARD", SchemaDefinition=json.dumps(ORDER_V1))["SchemaVersionId"]
    buffer = io.BytesIO()
    fastavro.schemaless_writer(buffer, fastavro.parse_schema(ORDER_V1), _order(7))
    good = frame(buffer.getvalue(), uuid.UUID(version))
    truncated = frame(buffer.getvalue()[:3], uuid.UUID(version))
    not_framed = b"\x01plain text, no header"
    df = spark.createDataFrame([(good,), (truncated,), (not_framed,)], "data binary")
    options = _registry_options(glue, schemaName=name)

    # Raised as the query runs: from_exception finds the condition (as for any failed query).
    with pytest.raises(Exception) as failed:
        df.select(from_glue_schema_registry("data", options)).collect()
    error = from_exception(failed.value)
    assert isinstance(error, KinesisDecodeError)
    assert re.search(r"^\[KINESIS_SCHEMA_DECODE_FAILED\] Cannot decode the payload of row \d+ of partition \d+ of "
                     r"stage \d+ \(schema version id ([0-9a-f-]+)\)", str(error)).group(1) == version

    permissive = df.select(from_glue_schema_registry("data", options, mode="permissive").alias("o")) \
        .select("o.id", "o._error").collect()
    assert permissive[0] == (7, None)
    assert permissive[1].id is None and version in permissive[1]._error
    assert permissive[2].id is None and "not a Glue Schema Registry frame" in permissive[2]._error


def test_a_version_the_registry_does_not_know_fails_in_every_mode(spark, glue):
    _, client, registry = glue
    name = f"unknown-{uuid.uuid4().hex[:8]}"
    client.create_schema(RegistryId={"RegistryName": registry}, SchemaName=name, DataFormat="AVRO", Compatibility="BACKWARD",
                         SchemaDefinition=json.dumps(ORDER_V1))
    stranger = uuid.uuid4()
    df = spark.createDataFrame([(frame(b"\x02", stranger),)], "data binary")
    for mode in ("failfast", "permissive"):
        with pytest.raises(Exception) as failed:
            df.select(from_glue_schema_registry("data", _registry_options(glue, schemaName=name, mode=mode))).collect()
        error = from_exception(failed.value)
        assert isinstance(error, KinesisSchemaRegistryError)
        assert "EntityNotFoundException" in str(error) and str(stranger) in str(error)
        # The advice starts with the record's header and the version id it carries, not with the options that
        # choose the reader schema (those come last, as what does not apply).
        advice = str(error).split("EntityNotFoundException:", 1)[1]
        assert re.search(rf"\. The record's header carries schema version id {stranger}, which the registry reached "
                         r"here does not have", advice), advice
        assert advice.index("header") < advice.index("'schemaName'"), advice


@pytest.mark.compat
@pytest.mark.heavy
def test_sql_functions(spark, glue):
    endpoint, client, registry = glue
    name = f"sql-{uuid.uuid4().hex[:8]}"
    client.create_schema(RegistryId={"RegistryName": registry}, SchemaName=name, DataFormat="AVRO", Compatibility="BACKWARD",
                         SchemaDefinition=json.dumps(ORDER_V1))
    connection = (f"'registryEndpointUrl', '{endpoint}', 'region', 'us-east-1', 'awsAccessKeyId', 'local-test-key', "
                  f"'awsSecretKey', 'local-test-secret', 'registryName', '{registry}', 'schemaName', '{name}'")
    rows = spark.sql(f"""
        WITH orders AS (SELECT 5 AS id, 'c5' AS customer, CAST(12.5 AS DECIMAL(10, 2)) AS amount,
                               timestamp_millis(1700000000005) AS placed, CAST(NULL AS STRING) AS note),
             framed AS (SELECT to_glue_schema_registry(struct(*), NULL, map({connection})) AS data FROM orders)
        SELECT o.id, o.customer, CAST(o.amount AS STRING) AS amount
        FROM (SELECT from_glue_schema_registry(data, map({connection})) AS o FROM framed)""").collect()
    assert [tuple(r) for r in rows] == [(5, "c5", "12.50")]


def test_bad_options_and_schemas_fail_when_the_column_is_made(spark, glue):
    with pytest.raises(KinesisOptionError, match="registryEndpointUrl"):
        from_glue_schema_registry("data", {"schemaDefinition": json.dumps(ORDER_V1), "endpointUrl": "http://x:1"})
    with pytest.raises(KinesisOptionError, match="schemaName"):
        from_glue_schema_registry("data", {"region": "us-east-1"})
    with pytest.raises(KinesisOptionError, match="Did you mean 'schemaName'"):
        from_glue_schema_registry("data", {"schemaNmae": "orders"})
    with pytest.raises(KinesisSchemaError, match="not a valid Avro schema"):
        from_glue_schema_registry("data", schema_definition="{not json", region="us-east-1")
    with pytest.raises(KinesisSchemaRegistryError, match="EntityNotFoundException"):
        from_glue_schema_registry("data", _registry_options(glue, schemaName="no-such-schema"))
    with pytest.raises(KinesisSchemaError, match="no version of that schema"):
        to_glue_schema_registry(F.struct(F.lit(1).alias("id")), json.dumps(ORDER_V1),
                                _registry_options(glue, schemaName=f"never-{uuid.uuid4().hex[:6]}"))


def test_secrets_stay_out_of_plans(spark, glue):
    df = spark.createDataFrame([(b"",)], "data binary").select(
        from_glue_schema_registry("data", _registry_options(glue, schemaDefinition=json.dumps(ORDER_V1),
                                                            framing="none")).alias("o"))
    plan = df._jdf.queryExecution().toString()
    assert "local-test-secret" not in plan and "from_glue_schema_registry" in plan


ORDER_JSON = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
              "properties": {"id": {"type": "integer"}, "customer": {"type": "string"},
                             "placed": {"type": "string", "format": "date-time"},
                             "lines": {"type": "array", "items": {"$ref": "#/definitions/line"}},
                             "channel": {"type": "string", "enum": ["web", "app", "pos"]}},
              "required": ["id", "customer"],
              "definitions": {"line": {"type": "object", "properties": {"sku": {"type": "string"},
                                                                        "quantity": {"type": "integer"}}}}}


@pytest.mark.compat
@pytest.mark.heavy
def test_json_schema_payloads_both_ways_with_the_pypi_serializer(spark, kinesalite_server, glue, stream_name):
    """JSON Schema: records framed by the PyPI serializer (which validates them) decode with the source; records the
    sink encodes (zlib) are read back by the PyPI deserializer."""
    topic = f"json-{uuid.uuid4().hex[:8]}"
    kinesis = streams.client(kinesalite_server)
    streams.create_stream(kinesis, stream_name, 1)
    orders = [{"id": i, "customer": f"c{i % 4}", "placed": f"2026-11-26T10:00:{i % 60:02d}Z",
               "lines": [{"sku": f"s{i}", "quantity": i % 3 + 1}], "channel": ["web", "app", "pos"][i % 3]}
              for i in range(30)]
    serializer = KafkaSerializer(_serializer(glue))
    _put(kinesalite_server, stream_name,
         [serializer.serialize(topic, DataAndSchema(o, JsonSchema(ORDER_JSON))) for o in orders])
    options = _registry_options(glue, schemaName=f"{topic}-value")
    read = read_kinesis(spark, stream_name, **connector_options(kinesalite_server)).select(
        from_glue_schema_registry("data", options).alias("o"))
    got = sorted((r.id, r.customer, r.placed_micros, r.sku, r.quantity, r.channel) for r in read.selectExpr(
        "o.id", "o.customer", "unix_micros(o.placed) AS placed_micros", "o.lines[0].sku AS sku",
        "o.lines[0].quantity AS quantity", "o.channel").collect())
    epoch = 1_795_000_000  # not used: the expected instants are computed from the texts below
    del epoch
    import datetime as dt
    assert got == sorted((o["id"], o["customer"],
                          int(dt.datetime.fromisoformat(o["placed"].replace("Z", "+00:00")).timestamp()) * 1_000_000,
                          o["lines"][0]["sku"], o["lines"][0]["quantity"], o["channel"]) for o in orders)

    # The other way: encoded with the registered version, compressed, written by the sink, read by the PyPI package.
    out = f"{stream_name}-out"
    streams.create_stream(kinesis, out, 1)
    framed = read.select(to_glue_schema_registry("o", None, options, compression="zlib").alias("data"),
                         F.col("o.customer").alias("partitionKey"))
    write_kinesis(framed, out, **connector_options(kinesalite_server))
    deserializer = KafkaDeserializer(_serializer(glue))
    back = [deserializer.deserialize(topic, r["data"]).data for r in streams.read_all(kinesis, out)]
    assert sorted(back, key=lambda o: o["id"]) == orders


SHOP_PROTO = """
syntax = "proto3";
package shop;

// The registry holds this text; the index in each frame counts the messages below sorted by full name:
// shop.Customer = 0, shop.Order = 1, shop.Order.Line = 2, shop.Order.Line.Price = 3.
message Order {
  int64 id = 1;
  string customer = 2;
  repeated Line lines = 3;
  Status status = 4;
  message Line {
    string sku = 1;
    int32 quantity = 2;
    Price price = 3;
    message Price { int64 cents = 1; string currency = 2; }
  }
  enum Status { NEW = 0; PAID = 1; SHIPPED = 2; }
}
message Customer { string name = 1; }
"""


def _shop_classes():
    """The messages of SHOP_PROTO as Google's protobuf library builds them (from a descriptor, without protoc)."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    F_ = descriptor_pb2.FieldDescriptorProto
    file = descriptor_pb2.FileDescriptorProto(name=f"shop-{uuid.uuid4().hex[:6]}.proto", package="shop",
                                              syntax="proto3")
    order = file.message_type.add(name="Order")
    order.field.add(name="id", number=1, type=F_.TYPE_INT64, label=F_.LABEL_OPTIONAL)
    order.field.add(name="customer", number=2, type=F_.TYPE_STRING, label=F_.LABEL_OPTIONAL)
    order.field.add(name="lines", number=3, type=F_.TYPE_MESSAGE, label=F_.LABEL_REPEATED,
                    type_name=".shop.Order.Line")
    order.field.add(name="status", number=4, type=F_.TYPE_ENUM, label=F_.LABEL_OPTIONAL,
                    type_name=".shop.Order.Status")
    line = order.nested_type.add(name="Line")
    line.field.add(name="sku", number=1, type=F_.TYPE_STRING, label=F_.LABEL_OPTIONAL)
    line.field.add(name="quantity", number=2, type=F_.TYPE_INT32, label=F_.LABEL_OPTIONAL)
    line.field.add(name="price", number=3, type=F_.TYPE_MESSAGE, label=F_.LABEL_OPTIONAL,
                   type_name=".shop.Order.Line.Price")
    price = line.nested_type.add(name="Price")
    price.field.add(name="cents", number=1, type=F_.TYPE_INT64, label=F_.LABEL_OPTIONAL)
    price.field.add(name="currency", number=2, type=F_.TYPE_STRING, label=F_.LABEL_OPTIONAL)
    status = order.enum_type.add(name="Status")
    for i, name in enumerate(["NEW", "PAID", "SHIPPED"]):
        status.value.add(name=name, number=i)
    file.message_type.add(name="Customer").field.add(name="name", number=1, type=F_.TYPE_STRING,
                                                     label=F_.LABEL_OPTIONAL)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("shop.Order"))


@pytest.mark.compat
@pytest.mark.heavy
def test_protobuf_with_nested_messages_both_ways(spark, kinesalite_server, glue, stream_name):
    """Protobuf: messages built by Google's protobuf library, framed with the PyPI package's codec (index 1,
    shop.Order; zlib for half), decode by field number into nested structs; the sink's records parse back."""
    _, client, registry = glue
    name = f"proto-{uuid.uuid4().hex[:8]}"
    version = client.create_schema(RegistryId={"RegistryName": registry}, SchemaName=name, DataFormat="PROTOBUF",
                                   Compatibility="BACKWARD", SchemaDefinition=SHOP_PROTO)["SchemaVersionId"]
    Order = _shop_classes()
    orders = []
    for i in range(20):
        o = Order(id=i, customer=f"c{i % 3}", status=i % 3)
        for j in range(i % 3):
            o.lines.add(sku=f"s{i}-{j}", quantity=j + 1, price={"cents": 100 * i + j, "currency": "EUR"})
        orders.append(o)
    kinesis = streams.client(kinesalite_server)
    streams.create_stream(kinesis, stream_name, 1)
    _put(kinesalite_server, stream_name,
         [frame(b"\x01" + o.SerializeToString(), uuid.UUID(version), compression=(i % 2 == 1))
          for i, o in enumerate(orders)])
    options = _registry_options(glue, schemaName=name, protobufMessageName="Order")
    read = read_kinesis(spark, stream_name, **connector_options(kinesalite_server)).select(
        from_glue_schema_registry("data", options).alias("o"))
    rows = sorted(read.select("o.*").collect(), key=lambda r: r.id)
    assert [(r.id, r.customer, r.status, [(l.sku, l.quantity, l.price.cents, l.price.currency) for l in r.lines])
            for r in rows] == \
        [(o.id, o.customer, Order.Status.Name(o.status),
          [(l.sku, l.quantity, l.price.cents, l.price.currency) for l in o.lines]) for o in orders]

    out = f"{stream_name}-out"
    streams.create_stream(kinesis, out, 1)
    framed = read.select(to_glue_schema_registry("o", None, options).alias("data"),
                         F.col("o.customer").alias("partitionKey"))
    write_kinesis(framed, out, **connector_options(kinesalite_server))
    back = []
    for r in streams.read_all(kinesis, out):
        payload = r["data"]
        assert payload[:2] == b"\x03\x00" and uuid.UUID(bytes=payload[2:18]) == uuid.UUID(version)
        assert payload[18] == 1  # the message index of shop.Order
        back.append(Order.FromString(payload[19:]))
    assert sorted(back, key=lambda o: o.id) == orders
