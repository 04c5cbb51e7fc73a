"""Typed payloads: decoding and encoding AWS Glue Schema Registry (and plain) Avro, JSON Schema and Protobuf
payloads with DataFrame columns.

Both functions take the options of docs/options.md, "Schema registry", as a mapping, as keyword arguments, or both,
in any spelling (``schemaName``, ``schema_name``), plus the connection's region and credential options. The format
is the registered schema's own (``AVRO``, ``JSON`` or ``PROTOBUF``), or ``data_format`` for a ``schema_definition``
(``avro``, ``json``, ``protobuf``; with ``protobuf_message_name`` when the ``.proto`` has several top-level
messages). In classic PySpark they build the column in the connector's JVM directly; with Spark Connect they call the
SQL functions of the connector's session extensions, which the server has wherever the jar is on its classpath.
See docs/schema-registry.md.

>>> from spark_kinesis import kinesis_stream, from_glue_schema_registry  # doctest: +SKIP
>>> orders = kinesis_stream(spark, "orders").select(  # doctest: +SKIP
...     from_glue_schema_registry("data", registry_name="shop", schema_name="orders").alias("order"))
"""

from __future__ import annotations

from typing import Dict, List, Mapping, Optional, Tuple

from pyspark.sql import Column
from pyspark.sql import functions as F

from spark_kinesis._columns import ColumnOrName, by_name, classic, is_connect
from spark_kinesis._validate import normalize

__all__ = ["from_glue_schema_registry", "to_glue_schema_registry"]

_DECODE = "from_glue_schema_registry"
_ENCODE = "to_glue_schema_registry"


def _options(options: Optional[Mapping[str, object]], keywords: Dict[str, object]) -> Dict[str, str]:
    pairs: List[Tuple[str, object]] = list((options or {}).items()) + list(keywords.items())
    return normalize(pairs, "schemaregistry")


def _options_map(options: Dict[str, str]) -> Column:
    return F.create_map(*[F.lit(part) for item in sorted(options.items()) for part in item])


def from_glue_schema_registry(data: ColumnOrName, options: Optional[Mapping[str, object]] = None,
                              **keywords: object) -> Column:
    """Decode Glue Schema Registry payloads (the source's ``data``) into a struct of the reader schema.

    The reader schema is ``schema_name`` (with ``registry_name``; version ``schema_version_number``, the latest by
    default, looked up once when the query is defined) or ``schema_definition`` (an Avro schema's JSON, a JSON Schema,
    or ``.proto`` text, as ``data_format`` says). Each record's writer schema is the version its header names, fetched
    once per executor: Avro writer versions resolve to the reader schema by Avro's rules, JSON documents are read
    into the reader schema's fields, and Protobuf messages by field number. With ``framing="none"`` payloads carry no
    header and are read with the reader schema. ``mode="permissive"`` gives nulls and the reason in a field
    ``_error`` (``error_field``) instead of failing the query.

    >>> decoded = df.select(from_glue_schema_registry(  # doctest: +SKIP
    ...     "data", {"registryName": "shop", "schemaName": "orders"}, region="eu-west-1").alias("order"))
    >>> decoded.select("order.*")  # doctest: +SKIP
    """
    settings = _options(options, keywords)
    if is_connect(data):
        column = F.col(data) if isinstance(data, str) else data
        return by_name(_DECODE, column, _options_map(settings))
    return classic(_DECODE, data, settings)


def to_glue_schema_registry(value: ColumnOrName, schema: Optional[str] = None,
                            options: Optional[Mapping[str, object]] = None, **keywords: object) -> Column:
    """Encode ``value`` (a struct) as Glue Schema Registry payloads (Avro, JSON or Protobuf), for the Kinesis sink's
    ``data`` column.

    ``schema`` is the schema to write with (an Avro schema's JSON, a JSON Schema, or ``.proto`` text, as
    ``data_format`` says), a version of ``schema_name``; registered first when ``auto_registration=True``, else it
    must be registered already. Without ``schema`` the registered version ``schema_version_number`` (the latest by
    default) is used, in its own format. ``compression="zlib"`` compresses each body; ``framing="none"`` writes the
    body without the header.

    >>> out = df.select(to_glue_schema_registry(  # doctest: +SKIP
    ...     F.struct("id", "amount"), schema_name="orders", registry_name="shop").alias("data"))
    """
    settings = _options(options, keywords)
    if is_connect(value):
        column = F.col(value) if isinstance(value, str) else value
        return by_name(_ENCODE, column, F.lit(schema) if schema is not None else F.lit(None).cast("string"),
                        _options_map(settings))
    return classic(_ENCODE, value, schema, settings)
