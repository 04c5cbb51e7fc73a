"""spark-kinesis: Amazon Kinesis Data Streams for PySpark.

Example::

    from pyspark.sql import SparkSession
    from spark_kinesis import configure_spark_with_kinesis, read_kinesis

    spark = configure_spark_with_kinesis(SparkSession.builder.master("local[2]")).getOrCreate()
    read_kinesis(spark, "orders", region="us-east-1").show()

The functions work with classic and Spark Connect sessions alike (see docs/spark-connect.md); errors are the
classes of :mod:`spark_kinesis.errors`.
"""

from spark_kinesis import errors
from spark_kinesis._jar import __version__, jar_path
from spark_kinesis.dynamodb import from_dynamodb_json
from spark_kinesis.io import (InitialPosition, InitialPositionValue, dynamodb_stream, kinesis_stream, read_kinesis,
                              write_kinesis)
from spark_kinesis.options import KinesisOptions
from spark_kinesis.schema_registry import from_glue_schema_registry, to_glue_schema_registry
from spark_kinesis.session import configure_spark_with_kinesis

__all__ = [
    "__version__",
    "InitialPosition",
    "InitialPositionValue",
    "KinesisOptions",
    "configure_spark_with_kinesis",
    "dynamodb_stream",
    "errors",
    "from_dynamodb_json",
    "from_glue_schema_registry",
    "jar_path",
    "kinesis_stream",
    "read_kinesis",
    "to_glue_schema_registry",
    "write_kinesis",
]
