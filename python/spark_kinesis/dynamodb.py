"""DynamoDB's typed JSON as Spark structs: ``from_dynamodb_json``.

DynamoDB Streams records carry their item images, and Kinesis Data Streams for DynamoDB records their
``dynamodb.NewImage`` and ``dynamodb.OldImage``, in DynamoDB's typed JSON: every attribute value wrapped in its
type (``{"id": {"S": "a1"}, "total": {"N": "12.50"}}``). ``from_dynamodb_json`` reads such items into a struct of
the schema you give, with each DynamoDB type going only into the Spark types that hold it without loss
(docs/dynamodb-json.md).

>>> from pyspark.sql import functions as F
>>> from spark_kinesis import kinesis_stream, from_dynamodb_json  # doctest: +SKIP
>>> changes = kinesis_stream(spark, "orders-cdc").select(  # doctest: +SKIP
...     F.get_json_object(F.col("data").cast("string"), "$.eventName").alias("event"),
...     from_dynamodb_json(F.get_json_object(F.col("data").cast("string"), "$.dynamodb.NewImage"),
...                        "id STRING, total DECIMAL(12,2), items ARRAY<STRUCT<sku: STRING, qty: INT>>").alias("new"))
"""

from __future__ import annotations

from typing import Union

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from spark_kinesis._columns import ColumnOrName, by_name, classic, is_connect

__all__ = ["from_dynamodb_json"]

_NAME = "from_dynamodb_json"


def from_dynamodb_json(item: ColumnOrName, schema: Union[str, StructType]) -> Column:
    """Read DynamoDB items in DynamoDB's typed JSON (a string column) into a struct of ``schema``.

    ``schema`` is a DDL string (``"id STRING, total DECIMAL(12,2)"``) or a ``StructType``. Fields match attributes by
    name; an attribute missing from the item, or ``{"NULL": true}``, reads as null, and attributes the schema does not
    name are left out. Numbers (``N``) go into integer fields only when whole and in range, into decimals only when
    they fit the scale and precision, and into doubles, floats and strings as they are; a value its field cannot hold
    fails the query with ``KINESIS_DYNAMODB_JSON_UNREADABLE`` (:class:`spark_kinesis.errors.KinesisDecodeError`),
    naming the attribute. A null string gives a null struct.

    >>> df = spark.createDataFrame([('{"id": {"S": "a1"}, "qty": {"N": "2"}}',)], ["item"])  # doctest: +SKIP
    >>> df.select(from_dynamodb_json("item", "id STRING, qty INT").alias("v")).first().v  # doctest: +SKIP
    Row(id='a1', qty=2)
    """
    text = schema.json() if isinstance(schema, StructType) else schema
    if not isinstance(text, str) or not text.strip():
        raise TypeError("from_dynamodb_json: schema must be a DDL string such as 'id STRING' or a StructType")
    if is_connect(item):
        column = F.col(item) if isinstance(item, str) else item
        return by_name(_NAME, column, F.lit(text))
    return classic(_NAME, item, text)
