"""``from_dynamodb_json`` against boto3's own DynamoDB (de)serializer, on generated items.

boto3's ``TypeSerializer`` writes each generated Python item in DynamoDB's typed JSON (binary as base64, as DynamoDB
Streams and Kinesis Data Streams for DynamoDB write it); the connector reads the JSON into a struct of the item's
schema, and every value must equal what boto3's ``TypeDeserializer`` reads back from the same JSON. Items have nested
maps, lists of maps, the three set types, binary, booleans, NULL and missing attributes, numbers up to DynamoDB's 38
digits (as decimals) and whole numbers up to 64 bits, empty strings and non-BMP characters. The seed is in the
failure's message. Fixed cases of each type and refusal are in FromDynamoDbJsonSuite (Scala).
"""

from __future__ import annotations

import base64
import json
import random
from decimal import Context, Decimal
from typing import Any, Dict, List, Tuple

import pytest

boto3_types = pytest.importorskip("boto3.dynamodb.types")

from spark_kinesis import from_dynamodb_json  # noqa: E402
from spark_kinesis.errors import KinesisDecodeError  # noqa: E402

SEED = 20261129
ITEMS = 180
# DynamoDB numbers have up to 38 digits, past the default context's 28.
WIDE = Context(prec=60)
ALPHABET = "aZ09 _-é中\U0001F600\U00010348"


def _text(rng: random.Random) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 8)))


def _decimal(rng: random.Random) -> Decimal:
    digits = rng.randint(1, 33)
    whole = rng.randint(-(10 ** digits) + 1, 10 ** digits - 1)
    return Decimal(whole).scaleb(-rng.randint(0, 5))


def _field(rng: random.Random, depth: int) -> Tuple[str, Any]:
    """A random field: its DDL type and a generator of its Python values (None: NULL)."""
    kinds = ["string", "bigint", "decimal", "boolean", "binary", "strings", "numbers", "binaries", "map"]
    if depth < 2:
        kinds += ["struct", "list"]
    kind = rng.choice(kinds)
    if kind == "string":
        return "STRING", lambda: _text(rng)
    if kind == "bigint":
        return "BIGINT", lambda: Decimal(rng.choice([0, 1, -1, 2 ** 63 - 1, -(2 ** 63), rng.randint(-10 ** 12, 10 ** 12)]))
    if kind == "decimal":
        return "DECIMAL(38,5)", lambda: _decimal(rng)
    if kind == "boolean":
        return "BOOLEAN", lambda: rng.random() < 0.5
    if kind == "binary":
        return "BINARY", lambda: boto3_types.Binary(bytes(rng.randrange(256) for _ in range(rng.randint(1, 6))))
    if kind == "strings":
        return "ARRAY<STRING>", lambda: {_text(rng) + str(i) for i in range(rng.randint(1, 4))}
    if kind == "numbers":
        return "ARRAY<DECIMAL(38,5)>", lambda: {WIDE.add(_decimal(rng), i) for i in range(rng.randint(1, 4))}
    if kind == "binaries":
        return "ARRAY<BINARY>", lambda: {bytes([i, rng.randrange(256)]) for i in range(rng.randint(1, 4))}
    if kind == "map":
        return "MAP<STRING, BIGINT>", lambda: {f"k{i}": Decimal(rng.randint(-99, 99)) for i in range(rng.randint(0, 3))}
    ddl, make = _struct(rng, depth + 1)
    if kind == "struct":
        return f"STRUCT<{ddl}>", make
    return f"ARRAY<STRUCT<{ddl}>>", lambda: [make() for _ in range(rng.randint(0, 3))]


def _struct(rng: random.Random, depth: int) -> Tuple[str, Any]:
    fields = [(f"f{i}", *_field(rng, depth)) for i in range(rng.randint(1, 5))]
    ddl = ", ".join(f"{name}: {t}" if depth else f"{name} {t}" for name, t, _ in fields)

    def make() -> Dict[str, Any]:
        item: Dict[str, Any] = {}
        for name, _, value in fields:
            roll = rng.random()
            if roll < 0.1:
                continue  # missing: null
            item[name] = None if roll < 0.2 else value()
        return item
    return ddl, make


def _typed_json(item: Dict[str, Any]) -> str:
    """The item in DynamoDB's typed JSON, binary as base64 (boto3's serializer leaves it as bytes)."""
    serializer = boto3_types.TypeSerializer()

    def encode(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: encode(x) for k, x in v.items()}
        if isinstance(v, list):
            return [encode(x) for x in v]
        if isinstance(v, (bytes, bytearray)):
            return base64.b64encode(v).decode()
        if isinstance(v, boto3_types.Binary):
            return base64.b64encode(v.value).decode()
        return v
    return json.dumps({k: encode(serializer.serialize(v)) for k, v in item.items()})


def _expected(value: Any, ddl: str) -> Any:
    """What boto3's deserializer reads, in the shape Spark gives for the field's type."""
    if value is None:
        return None
    if ddl == "BIGINT":
        return int(value)
    if ddl.startswith("DECIMAL"):
        return value.quantize(Decimal("0.00001"), context=WIDE)
    if ddl == "BINARY":
        return bytes(value.value if isinstance(value, boto3_types.Binary) else value)
    if ddl == "ARRAY<STRING>":
        return sorted(value)
    if ddl == "ARRAY<DECIMAL(38,5)>":
        return sorted(v.quantize(Decimal("0.00001"), context=WIDE) for v in value)
    if ddl == "ARRAY<BINARY>":
        return sorted(bytes(v.value if isinstance(v, boto3_types.Binary) else v) for v in value)
    if ddl == "MAP<STRING, BIGINT>":
        return {k: int(v) for k, v in value.items()}
    return value  # strings and booleans


def _actual(value: Any, ddl: str) -> Any:
    if value is None:
        return None
    if ddl in ("ARRAY<STRING>", "ARRAY<DECIMAL(38,5)>"):
        return sorted(value)
    if ddl == "BINARY":
        return bytes(value)
    if ddl == "ARRAY<BINARY>":
        return sorted(bytes(v) for v in value)
    return value


def _compare(actual: Any, expected: Dict[str, Any], schema, path: str) -> List[str]:
    """Differences between the connector's row and boto3's item, field by field, with their paths."""
    problems = []
    for field in schema.fields:
        ddl = field.dataType.simpleString().upper().replace(",", ", ").replace(":", ": ")
        got = getattr(actual, field.name) if actual is not None else None
        want = expected.get(field.name)
        where = f"{path}.{field.name}" if path else field.name
        if field.dataType.typeName() == "struct":
            if (got is None) != (want is None):
                problems.append(f"{where}: {got!r} != {want!r}")
            elif got is not None:
                problems += _compare(got, want, field.dataType, where)
        elif field.dataType.typeName() == "array" and field.dataType.elementType.typeName() == "struct":
            if (got is None) != (want is None) or (got is not None and len(got) != len(want)):
                problems.append(f"{where}: {got!r} != {want!r}")
            elif got is not None:
                for i, (g, w) in enumerate(zip(got, want)):
                    problems += _compare(g, w, field.dataType.elementType, f"{where}[{i}]")
        else:
            simple = _ddl_of(field.dataType)
            if _actual(got, simple) != _expected(want, simple):
                problems.append(f"{where} ({simple}): {got!r} != {want!r}")
    return problems


def _ddl_of(t) -> str:
    name = t.simpleString()
    return {"string": "STRING", "bigint": "BIGINT", "decimal(38,5)": "DECIMAL(38,5)", "boolean": "BOOLEAN",
            "binary": "BINARY", "array<string>": "ARRAY<STRING>", "array<decimal(38,5)>": "ARRAY<DECIMAL(38,5)>",
            "array<binary>": "ARRAY<BINARY>", "map<string,bigint>": "MAP<STRING, BIGINT>"}[name]


def test_generated_items_read_as_boto3_reads_them(spark):
    rng = random.Random(SEED)
    deserializer = boto3_types.TypeDeserializer()
    mismatches: List[str] = []
    cases = 0
    for _ in range(ITEMS // 30):  # 6 schemas, 30 items each: one Spark job per schema
        ddl, make = _struct(rng, 0)
        items = [make() for _ in range(30)]
        texts = [_typed_json(item) for item in items]
        df = spark.createDataFrame([(t,) for t in texts], "item STRING")
        read = df.select(from_dynamodb_json("item", ddl).alias("v"))
        rows = read.collect()
        schema = read.schema["v"].dataType
        for text, row in zip(texts, rows):
            cases += 1
            typed = json.loads(text)
            # boto3 reads binary from bytes: give it back what its serializer wrote.
            expected = {k: deserializer.deserialize(_unbase64(v)) for k, v in typed.items()}
            for problem in _compare(row.v, expected, schema, ""):
                mismatches.append(f"seed {SEED}, schema '{ddl}', item {text}: {problem}")
    assert cases == ITEMS
    assert not mismatches, "\n".join(mismatches[:10])


def _unbase64(typed: Any) -> Any:
    if isinstance(typed, dict):
        out = {}
        for k, v in typed.items():
            if k == "B":
                out[k] = base64.b64decode(v)
            elif k == "BS":
                out[k] = [base64.b64decode(x) for x in v]
            elif k in ("M",):
                out[k] = {name: _unbase64(x) for name, x in v.items()}
            elif k == "L":
                out[k] = [_unbase64(x) for x in v]
            else:
                out[k] = v
        return out
    return typed


def test_a_value_its_field_cannot_hold_fails_naming_the_attribute(spark):
    df = spark.createDataFrame([('{"qty": {"N": "2.5"}}',)], "item STRING")
    with pytest.raises(Exception) as failure:
        df.select(from_dynamodb_json("item", "qty INT")).collect()
    text = str(failure.value)
    assert "KINESIS_DYNAMODB_JSON_UNREADABLE" in text and "attribute 'qty'" in text and "2.5 does not fit int" in text


def test_sql_and_a_struct_type_schema(spark):
    from pyspark.sql.types import DecimalType, StringType, StructField, StructType

    row = spark.sql("""SELECT from_dynamodb_json('{"id": {"S": "a"}, "n": {"N": "1.5"}}',
                       'id STRING, n DECIMAL(4,1)') AS v""").first()
    assert row.v.id == "a" and row.v.n == Decimal("1.5")
    schema = StructType([StructField("id", StringType()), StructField("n", DecimalType(4, 1))])
    df = spark.createDataFrame([('{"id": {"S": "b"}}',), (None,)], "item STRING")
    rows = df.select(from_dynamodb_json(df.item, schema).alias("v")).collect()
    assert rows[0].v.id == "b" and rows[0].v.n is None and rows[1].v is None
    with pytest.raises(TypeError):
        from_dynamodb_json("item", "")
