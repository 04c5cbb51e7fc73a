"""Reading from and writing to Kinesis with DataFrames, in classic PySpark and with Spark Connect."""

from __future__ import annotations

from typing import Dict, Final, Iterable, List, Optional, Tuple, Union

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming.readwriter import DataStreamWriter

from spark_kinesis._validate import mentions, normalize, stream_names
from spark_kinesis.errors import (KinesisAccessDeniedError, KinesisNoCredentialsError, KinesisOptionError,
                                  translate_errors)
from spark_kinesis.options import FOREIGN_OPTIONS, OPTIONS, InitialPositionValue

__all__ = ["InitialPosition", "InitialPositionValue", "dynamodb_stream", "kinesis_stream", "read_kinesis",
           "write_kinesis"]


class InitialPosition:
    """Values of ``initial_position``: where a new query starts in each shard.

    Type checkers know the argument as :data:`InitialPositionValue`, the ``Literal`` of these words.

    >>> from spark_kinesis import InitialPosition
    >>> InitialPosition.TRIM_HORIZON
    'trim_horizon'
    """

    LATEST: Final = "latest"
    """Records that arrive after the query first starts (streaming only; pinned in the checkpoint)."""
    TRIM_HORIZON: Final = "trim_horizon"
    """The oldest record still in the stream."""
    EARLIEST: Final = "earliest"
    """The same as ``TRIM_HORIZON``."""
    AT_TIMESTAMP: Final = "at_timestamp"
    """The first record that arrived at or after the ``initialTimestamp`` option."""


# The provider's class name rather than the short name "kinesis": on a platform that registers a Kinesis source
# of its own (Databricks), the short name is ambiguous; the class name always finds this connector.
FORMAT = "io.sparkkinesis.KinesisSourceProvider"
# A DynamoDB table's change stream, read by the same connector (docs/dynamodb-streams.md).
DYNAMODB_STREAMS_FORMAT = "io.sparkkinesis.DynamoDbStreamsSourceProvider"

# The column that holds a record's stream: reads give it, and the sink takes it as a row's target stream. The
# helpers read and write as format("kinesis"), whose columns are Databricks' (docs/source.md, "Columns").
STREAM_COLUMN: Final = "stream"

StreamNames = Union[str, Iterable[str]]


def _is_connect(obj: object) -> bool:
    """Whether ``obj`` (a session or a DataFrame) belongs to Spark Connect; never touches a JVM."""
    return type(obj).__module__.startswith("pyspark.sql.connect")


def _connector_options(scope: str, stream: List[str], named: List[Tuple[str, object]],
                       options: Dict[str, object]) -> Dict[str, str]:
    arguments: List[Tuple[str, object]] = []
    if stream:
        arguments.append(("stream", ",".join(stream)))
    arguments.extend(named)
    arguments.extend(options.items())
    return normalize(arguments, scope, aliases={"stream": "streamName"})


def _source_arguments(region: Optional[str], endpoint_url: Optional[str], initial_position: InitialPositionValue,
                      default: InitialPositionValue, options: Dict[str, object]) -> List[Tuple[str, object]]:
    named: List[Tuple[str, object]] = [("region", region), ("endpoint_url", endpoint_url)]
    # initialPosition=... among the options is fine when initial_position was left at its default.
    if not (initial_position == default and mentions(options, "initialPosition")):
        named.append(("initial_position", initial_position))
    return named


def _source_stream(stream: StreamNames) -> List[str]:
    names = stream_names(stream)
    if not names:
        raise KinesisOptionError(
            "[KINESIS_MISSING_OPTION] Argument 'stream' needs at least one stream name or ARN, "
            "e.g. kinesis_stream(spark, 'orders')", "KINESIS_MISSING_OPTION")
    return names


def _analysed(df: DataFrame) -> DataFrame:
    # Classic PySpark resolves the source in load(); Spark Connect only when the plan is first analysed. Ask for
    # the schema now, so that errors (a missing stream, a wrong region or endpoint, a missing connector jar)
    # surface here in both: the connector checks that the streams exist when the read is resolved.
    if _is_connect(df):
        _ = df.schema
    return df


def _option_scope(name: str) -> Optional[str]:
    """The scope of an option given under this connector's name or another connector's (FOREIGN_OPTIONS)."""
    target = name if name in OPTIONS else FOREIGN_OPTIONS.get(name)
    return OPTIONS[target].scope if target is not None and target in OPTIONS else None


def _check_sink_stream(spark: SparkSession, stream: str, opts: Dict[str, str]) -> None:
    """Fail now, with KinesisStreamNotFoundError, when the stream the sink writes to does not exist.

    The check is the connector's own, on the JVM (or the Spark Connect server) with the write's connection and
    credential options: a read of the stream is resolved, which lists one of its shards. Credentials that may
    write but not list shards (ListShards is not in a writer's policy, see docs/credentials.md) skip the check;
    the write then reports a missing stream when it first sends.
    """
    connection = {k: v for k, v in opts.items() if _option_scope(k) == "both"}
    connection["streamName"] = stream
    try:
        with translate_errors():
            _analysed(spark.read.format(FORMAT).options(**connection).load())
    except KinesisNoCredentialsError:
        raise
    except KinesisAccessDeniedError:
        pass


def kinesis_stream(
    spark: SparkSession,
    stream: StreamNames,
    *,
    region: Optional[str] = None,
    endpoint_url: Optional[str] = None,
    initial_position: InitialPositionValue = InitialPosition.LATEST,
    **options: object,
) -> DataFrame:
    """Read one or more streams as a streaming DataFrame (exactly-once micro-batches).

    Every micro-batch's range is fixed in Spark's checkpoint before it runs, so restarts, retries and several
    actions in ``foreachBatch`` see the same records. The same DataFrame runs in real-time mode with
    ``.trigger(realTime="5 minutes")`` (Spark 4.1 and later; PySpark takes it from 4.2): each record is passed on
    as it arrives, at least once (docs/source.md, "Real-time mode").

    :param spark: a session with the connector jar (see :func:`configure_spark_with_kinesis`); a Spark Connect
        session works too when its server has the jar.
    :param stream: a stream name or ARN, a comma-separated list, or a list of them.
    :param region: the streams' AWS region; by default the SDK's region chain (``AWS_REGION``, profile).
    :param endpoint_url: a Kinesis endpoint other than AWS's, e.g. LocalStack's ``http://localhost:4566``.
    :param initial_position: where a new query starts (see :class:`InitialPosition`): ``latest`` (pinned when
        the query first starts), ``trim_horizon``/``earliest``, or ``at_timestamp`` with ``initialTimestamp``.
        A query restarted from a checkpoint continues where it stopped.
    :param options: any other option of docs/options.md, under its name (``maxRecordsPerTrigger=10000``) or in
        snake case (``max_records_per_trigger=10000``). Booleans, numbers, ``datetime.timedelta`` durations and
        timezone-aware ``datetime.datetime`` timestamps are converted.
    :returns: a streaming DataFrame with Databricks' columns, in its order (a Databricks program's selects run
        unchanged): ``partitionKey``, ``data`` (binary), ``stream`` (the stream's name), ``shardId``,
        ``sequenceNumber``, ``approximateArrivalTimestamp``, then this connector's ``subSequenceNumber`` (the user
        record's index inside a KPL aggregate).
    :raises spark_kinesis.errors.KinesisOptionError: for an unknown, misplaced or malformed argument, before Spark
        is called; the message names the argument as you wrote it.
    :raises spark_kinesis.errors.KinesisConnectorNotFoundError: when the session does not have the jar.

    >>> from spark_kinesis import kinesis_stream
    >>> orders = kinesis_stream(spark, "orders", region="eu-west-1", initial_position="trim_horizon",
    ...                         max_records_per_trigger=10000)
    >>> orders.isStreaming
    True
    >>> orders.columns
    ['partitionKey', 'data', 'stream', 'shardId', 'sequenceNumber', 'approximateArrivalTimestamp', 'subSequenceNumber']
    >>> query = (orders.selectExpr("CAST(data AS STRING) AS json", "approximateArrivalTimestamp")
    ...          .writeStream.format("parquet").option("path", "/data/orders")
    ...          .option("checkpointLocation", "/checkpoints/orders").start())  # doctest: +SKIP
    """
    names = _source_stream(stream)
    named = _source_arguments(region, endpoint_url, initial_position, InitialPosition.LATEST, options)
    opts = _connector_options("source", names, named, options)
    with translate_errors():
        return _analysed(spark.readStream.format(FORMAT).options(**opts).load())


def dynamodb_stream(
    spark: SparkSession,
    table: Optional[str] = None,
    *,
    stream_arn: Optional[str] = None,
    region: Optional[str] = None,
    endpoint_url: Optional[str] = None,
    initial_position: InitialPositionValue = InitialPosition.LATEST,
    **options: object,
) -> DataFrame:
    """Read a DynamoDB table's change stream (DynamoDB Streams) as a streaming DataFrame.

    The same exactly-once engine as :func:`kinesis_stream` (ranges fixed in the checkpoint, AvailableNow, rate
    limits, metrics, credentials), reading through the DynamoDB Streams API: one row per change, in order per item
    key (docs/dynamodb-streams.md). Give the table (its latest stream is read; it must have one enabled) or the
    stream's ARN.

    :param spark: a session with the connector jar (see :func:`configure_spark_with_kinesis`).
    :param table: the DynamoDB table whose latest stream to read.
    :param stream_arn: the stream's ARN instead of ``table``.
    :param region: the table's AWS region; by default the SDK's region chain (``AWS_REGION``, profile).
    :param endpoint_url: a DynamoDB Streams endpoint other than AWS's, e.g. a local server's.
    :param initial_position: where a new query starts: ``latest`` (pinned when the query first starts) or
        ``trim_horizon`` (the oldest change still kept, up to 24 hours back).
    :param options: any other source option of docs/options.md, under its name or in snake case.
    :returns: a streaming DataFrame with the columns ``eventID``, ``eventName`` (``INSERT``, ``MODIFY``,
        ``REMOVE``), ``approximateCreationDateTime``, ``sequenceNumber``, ``sizeBytes``, ``streamViewType``,
        ``shardId``, ``userIdentity`` (set for deletes by TTL), and ``keys``, ``newImage``, ``oldImage`` in
        DynamoDB's JSON, which :func:`from_dynamodb_json` reads.
    :raises spark_kinesis.errors.KinesisOptionError: for an unknown or malformed argument, or neither or both of
        ``table`` and ``stream_arn``.
    :raises spark_kinesis.errors.KinesisStreamNotFoundError: when the table has no enabled stream (the message
        says how to enable one).

    (The examples need a table on AWS, so the docstring tests skip them.)

    >>> from spark_kinesis import dynamodb_stream, from_dynamodb_json
    >>> changes = dynamodb_stream(spark, "orders", region="eu-west-1",
    ...                           initial_position="trim_horizon")  # doctest: +SKIP
    >>> changes.columns  # doctest: +SKIP
    ['eventID', 'eventName', 'approximateCreationDateTime', 'sequenceNumber', 'sizeBytes', 'streamViewType', 'shardId', 'userIdentity', 'keys', 'newImage', 'oldImage']
    >>> orders = changes.select("eventName", from_dynamodb_json(
    ...     "newImage", "id STRING, total DECIMAL(12,2)").alias("order"))  # doctest: +SKIP
    """
    if (table is None) == (stream_arn is None):
        raise KinesisOptionError(
            "[KINESIS_MISSING_OPTION] Give dynamodb_stream either a table or stream_arn, e.g. "
            "dynamodb_stream(spark, 'orders')", "KINESIS_MISSING_OPTION")
    named: List[Tuple[str, object]] = [("tableName", table), ("dynamoDbStreamArn", stream_arn)]
    named += _source_arguments(region, endpoint_url, initial_position, InitialPosition.LATEST, options)
    opts = _connector_options("source", [], named, options)
    with translate_errors():
        return _analysed(spark.readStream.format(DYNAMODB_STREAMS_FORMAT).options(**opts).load())


def read_kinesis(
    spark: SparkSession,
    stream: StreamNames,
    *,
    region: Optional[str] = None,
    endpoint_url: Optional[str] = None,
    initial_position: InitialPositionValue = InitialPosition.TRIM_HORIZON,
    **options: object,
) -> DataFrame:
    """Read the records of one or more streams as a batch DataFrame.

    Reads every shard from ``initial_position`` (``trim_horizon``/``earliest``, or ``at_timestamp`` with the
    ``initialTimestamp`` option) up to the records that had arrived when the query is planned. The arguments
    and columns are those of :func:`kinesis_stream`; ``latest`` is refused, a batch read needs a start.

    >>> from datetime import datetime, timezone
    >>> from spark_kinesis import read_kinesis
    >>> recent = read_kinesis(spark, ["orders", "refunds"], region="eu-west-1", initial_position="at_timestamp",
    ...                       initial_timestamp=datetime(2026, 1, 31, 12, 0, tzinfo=timezone.utc))
    >>> recent.isStreaming
    False
    >>> recent.selectExpr("stream", "CAST(data AS STRING) AS json").show()  # doctest: +SKIP
    """
    names = _source_stream(stream)
    named = _source_arguments(region, endpoint_url, initial_position, InitialPosition.TRIM_HORIZON, options)
    opts = _connector_options("source", names, named, options)
    with translate_errors():
        return _analysed(spark.read.format(FORMAT).options(**opts).load())


def write_kinesis(
    df: DataFrame,
    stream: Optional[str],
    *,
    region: Optional[str] = None,
    endpoint_url: Optional[str] = None,
    **options: object,
) -> Optional[DataStreamWriter]:
    """Write a DataFrame to a stream with PutRecords (at-least-once; see docs/sink.md for de-duplication).

    ``df`` has a ``data`` column (binary or string) and may have ``partitionKey`` (string; otherwise the
    ``partitionKeyColumn`` option names one, or each record gets a random key), ``explicitHashKey`` and a
    ``stream`` column (a per-row target stream, the column reads give: the ``stream`` argument is then the default
    for rows without one, and may be ``None``). Select the columns to write, as below: a read's ``stream`` column
    passed on (with ``unused_columns="ignore"``) sends each row back to the stream it came from.

    A batch DataFrame is written at once and ``None`` is returned. For a streaming DataFrame the configured
    ``DataStreamWriter`` is returned (append mode), to be started with a checkpoint location.

    :param df: the rows to write, batch or streaming.
    :param stream: the stream name or ARN to write to.
    :param region: the stream's AWS region; by default the SDK's region chain.
    :param endpoint_url: a Kinesis endpoint other than AWS's.
    :param options: any sink option of docs/options.md, by name or in snake case (``ordering="perKey"``,
        ``max_retries=20``).
    :raises spark_kinesis.errors.KinesisOptionError: for an unknown, misplaced or malformed argument, before Spark
        is called.
    :raises spark_kinesis.errors.KinesisSchemaError: when ``df`` lacks ``data`` or has columns the sink does not
        take (batch writes; a streaming query fails with it when started).

    >>> from spark_kinesis import kinesis_stream, write_kinesis
    >>> events = spark.createDataFrame([("customer-1", '{"id": 1}')], "partitionKey string, data string")
    >>> write_kinesis(events, "orders", region="eu-west-1")  # doctest: +SKIP
    >>> orders = kinesis_stream(spark, "orders", region="eu-west-1")
    >>> copy = write_kinesis(orders.select("data", "partitionKey"), "orders-copy", region="eu-west-1",
    ...                      ordering="perKey")
    >>> query = copy.option("checkpointLocation", "/checkpoints/orders-copy").start()  # doctest: +SKIP
    """
    names = stream_names(stream)
    if len(names) > 1:
        raise KinesisOptionError(
            f"[KINESIS_INVALID_OPTION_VALUE] Argument 'stream' names {len(names)} streams, but the sink writes to one "
            "stream by default; route rows to other streams with a 'stream' column.",
            "KINESIS_INVALID_OPTION_VALUE")
    opts = _connector_options("sink", names, [("region", region), ("endpoint_url", endpoint_url)], options)
    with translate_errors():
        if "streamName" not in opts and STREAM_COLUMN not in df.columns:
            raise KinesisOptionError(
                f"[KINESIS_MISSING_OPTION] Argument 'stream' is None and the DataFrame has no '{STREAM_COLUMN}' "
                "column: name the stream to write to, e.g. write_kinesis(df, 'orders').", "KINESIS_MISSING_OPTION")
        if names:
            _check_sink_stream(df.sparkSession, names[0], opts)
        if df.isStreaming:
            return df.writeStream.format(FORMAT).options(**opts).outputMode("append")
        df.write.format(FORMAT).options(**opts).mode("append").save()
    return None
