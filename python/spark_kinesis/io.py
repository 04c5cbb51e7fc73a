"""Reading from and writing to Kinesis with DataFrames."""

from __future__ import annotations

from typing import Iterable, Optional, Union

from pyspark.sql import DataFrame, SparkSession

__all__ = ["read_kinesis", "write_kinesis"]

FORMAT = "kinesis"

StreamNames = Union[str, Iterable[str]]


def _stream_option(stream: StreamNames) -> str:
    if isinstance(stream, str):
        names = [s.strip() for s in stream.split(",")]
    else:
        names = [str(s).strip() for s in stream]
    names = [n for n in names if n]
    if not names:
        raise ValueError("stream: give at least one stream name or ARN, e.g. read_kinesis(spark, 'orders')")
    return ",".join(names)


def _options(stream: StreamNames, region: Optional[str], endpoint_url: Optional[str], **options: object) -> dict:
    opts = {"streamName": _stream_option(stream)}
    if region is not None:
        opts["region"] = region
    if endpoint_url is not None:
        opts["endpointUrl"] = endpoint_url
    for key, value in options.items():
        if value is None:
            continue
        opts[key] = str(value).lower() if isinstance(value, bool) else str(value)
    return opts


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
    opts = _options(stream, region, endpoint_url, initialPosition=initial_position, **options)
    return spark.read.format(FORMAT).options(**opts).load()


def write_kinesis(
    df: DataFrame,
    stream: str,
    *,
    region: Optional[str] = None,
    endpoint_url: Optional[str] = None,
    **options: object,
) -> None:
    """Write a batch DataFrame to a stream with PutRecords.

    ``df`` must have the columns ``data`` (binary or string) and ``partitionKey`` (string) and no others.

    Example::

        events = spark.createDataFrame([("k1", '{"id": 1}')], "partitionKey string, data string")
        write_kinesis(events, "orders", region="eu-west-1")
    """
    opts = _options(stream, region, endpoint_url, **options)
    df.write.format(FORMAT).options(**opts).mode("append").save()
