"""Reading from and writing to Kinesis with DataFrames."""

from __future__ import annotations

from typing import Iterable, Optional, Union

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming import DataStreamWriter

from spark_kinesis._validate import validate
from spark_kinesis.errors import KinesisOptionError, translate_errors

__all__ = ["InitialPosition", "kinesis_stream", "read_kinesis", "write_kinesis"]


class InitialPosition:
    """Values of ``initial_position`` (where a new query starts in each shard)."""

    LATEST = "latest"
    TRIM_HORIZON = "trim_horizon"
    EARLIEST = "earliest"
    AT_TIMESTAMP = "at_timestamp"


FORMAT = "kinesis"

StreamNames = Union[str, Iterable[str]]


def _stream_option(stream: StreamNames) -> str:
    if isinstance(stream, str):
        names = [s.strip() for s in stream.split(",")]
    else:
        names = [str(s).strip() for s in stream]
    names = [n for n in names if n]
    if not names:
        raise KinesisOptionError(
            "[KINESIS_MISSING_OPTION] Argument 'stream' needs at least one stream name or ARN, "
            "e.g. kinesis_stream(spark, 'orders')", "KINESIS_MISSING_OPTION")
    return ",".join(names)


# Keyword arguments with Python names, and the options they set.
_ARGUMENTS = {"region": "region", "endpointUrl": "endpoint_url", "initialPosition": "initial_position",
              "streamName": "stream"}


def _options(scope: str, stream: StreamNames, region: Optional[str], endpoint_url: Optional[str],
             **options: object) -> dict:
    opts = {"streamName": _stream_option(stream)}
    if region is not None:
        opts["region"] = region
    if endpoint_url is not None:
        opts["endpointUrl"] = endpoint_url
    for key, value in options.items():
        if value is None:
            continue
        opts[key] = str(value).lower() if isinstance(value, bool) else str(value)
    return validate(opts, scope, _ARGUMENTS)


def kinesis_stream(
    spark: SparkSession,
    stream: StreamNames,
    *,
    region: Optional[str] = None,
    endpoint_url: Optional[str] = None,
    initial_position: str = "latest",
    **options: object,
) -> DataFrame:
    """Read one or more streams as a streaming DataFrame (exactly-once micro-batches).

    Every micro-batch's range is fixed in Spark's checkpoint before it runs, so restarts, retries and several
    actions in ``foreachBatch`` see the same records. ``initial_position`` applies to a new query only:
    ``latest`` (pinned when the query first starts), ``trim_horizon``/``earliest``, or ``at_timestamp`` with the
    ``initialTimestamp`` option. Pacing and limits (``maxRecordsPerTrigger``, ``maxBytesPerTrigger``, ...) go in
    ``options`` under their documented names.

    Example::

        orders = kinesis_stream(spark, "orders", region="eu-west-1", maxRecordsPerTrigger=10000)
        query = (orders.selectExpr("CAST(data AS STRING) AS json")
                 .writeStream.format("parquet").option("path", "/data/orders")
                 .option("checkpointLocation", "/checkpoints/orders").start())
    """
    opts = _options("source", stream, region, endpoint_url, initialPosition=initial_position, **options)
    with translate_errors():
        return spark.readStream.format(FORMAT).options(**opts).load()


def read_kinesis(
    spark: SparkSession,
    stream: StreamNames,
    *,
    region: Optional[str] = None,
    endpoint_url: Optional[str] = None,
    initial_position: str = "trim_horizon",
    **options: object,
) -> DataFrame:
    """Read the records of one or more streams as a batch DataFrame.

    Reads every shard from ``initial_position`` (``trim_horizon``/``earliest``, or ``at_timestamp`` with the
    ``initialTimestamp`` option) up to the records present when the query runs. Columns: ``data`` (binary),
    ``streamName``, ``shardId``, ``partitionKey``, ``sequenceNumber``, ``subSequenceNumber``,
    ``approximateArrivalTimestamp``. Other connector options go in ``options`` under their documented names.

    Example::

        df = read_kinesis(spark, "orders", region="eu-west-1")
        df.selectExpr("CAST(data AS STRING) AS json", "partitionKey").show()
    """
    opts = _options("source", stream, region, endpoint_url, initialPosition=initial_position, **options)
    with translate_errors():
        return spark.read.format(FORMAT).options(**opts).load()


def write_kinesis(
    df: DataFrame,
    stream: str,
    *,
    region: Optional[str] = None,
    endpoint_url: Optional[str] = None,
    **options: object,
) -> Optional[DataStreamWriter]:
    """Write a DataFrame to a stream with PutRecords.

    ``df`` has a ``data`` column (binary or string) and may have ``partitionKey`` (string; otherwise the
    ``partitionKeyColumn`` option names one, or each record gets a random key), ``explicitHashKey`` and
    ``streamName`` (per-row target; ``stream`` is the default for rows without one). A batch DataFrame is written
    at once (returns ``None``); for a streaming DataFrame the configured ``DataStreamWriter`` is returned, to be
    started with a checkpoint location. Writes are at-least-once; see docs/sink.md for de-duplication.

    Example::

        events = spark.createDataFrame([("k1", '{"id": 1}')], "partitionKey string, data string")
        write_kinesis(events, "orders", region="eu-west-1")

        query = write_kinesis(stream_df, "orders-copy", region="eu-west-1") \
            .option("checkpointLocation", "/checkpoints/copy").start()
    """
    opts = _options("sink", stream, region, endpoint_url, **options)
    if df.isStreaming:
        return df.writeStream.format(FORMAT).options(**opts).outputMode("append")
    with translate_errors():
        df.write.format(FORMAT).options(**opts).mode("append").save()
    return None
