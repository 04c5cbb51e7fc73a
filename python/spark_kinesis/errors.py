"""Python exceptions for the connector's error conditions.

Every error the connector raises is a Spark error condition such as ``KINESIS_STREAM_NOT_FOUND``: the JVM exception
is a ``SparkThrowable`` with that condition, an SQLSTATE and message parameters, and its message starts with the
condition in brackets. The functions of this package raise the matching class below (chained to PySpark's
original exception, classic or Spark Connect); for errors that surface later, for example when a streaming query
fails, :func:`from_exception` finds the condition in any exception.

Every class derives from :class:`KinesisError`, whose ``condition`` attribute is the condition's name. Errors about
input you can fix (options, stream names, schemas) are also :class:`ValueError`.

Example::

    from spark_kinesis.errors import KinesisStreamNotFoundError, from_exception

    try:
        query.awaitTermination()
    except Exception as e:
        error = from_exception(e)
        if isinstance(error, KinesisStreamNotFoundError):
            ...  # create the stream, or alert
        raise
"""

from __future__ import annotations

import re
import warnings
from contextlib import contextmanager
from typing import Any, Dict, Iterator, List, Optional, Type

__all__ = [
    "KinesisError",
    "KinesisOptionError",
    "KinesisSchemaError",
    "KinesisInvalidRowError",
    "KinesisStreamNotFoundError",
    "KinesisAccessDeniedError",
    "KinesisNoCredentialsError",
    "KinesisDataLossError",
    "KinesisRangeUnavailableError",
    "KinesisInvalidOffsetError",
    "KinesisStreamsChangedError",
    "KinesisRetriesExhaustedError",
    "KinesisReadStalledError",
    "KinesisEndpointUnreachableError",
    "KinesisServiceError",
    "KinesisRecordTooLargeError",
    "KinesisRecordRejectedError",
    "KinesisConnectorNotFoundError",
    "KinesisVersionError",
    "KinesisSchemaRegistryError",
    "KinesisDecodeError",
    "KinesisConsumerError",
    "condition_of",
    "from_exception",
]


class KinesisError(Exception):
    """Base class of the connector's errors. ``condition`` is the bracketed name, e.g. ``KINESIS_DATA_LOSS``."""

    def __init__(self, message: str, condition: str = "KINESIS_ERROR") -> None:
        super().__init__(message)
        self.condition = condition


class KinesisOptionError(KinesisError, ValueError):
    """An option, keyword argument or stream name is unknown, missing, malformed, or conflicts with another."""


class KinesisSchemaError(KinesisError, ValueError):
    """The DataFrame given to the sink does not have the columns it needs."""


class KinesisInvalidRowError(KinesisError, ValueError):
    """A row the sink cannot turn into a record: null data, a bad partition key, hash key or stream name."""


class KinesisStreamNotFoundError(KinesisError):
    """A stream does not exist, or is not visible with these credentials and region."""


class KinesisAccessDeniedError(KinesisError):
    """The credentials' policy does not allow a call the connector needs."""


class KinesisNoCredentialsError(KinesisAccessDeniedError):
    """No AWS credentials were found (no options, nothing in the SDK's default chain)."""


class KinesisDataLossError(KinesisError):
    """Records the query should read are gone (trimmed by retention); see the ``failOnDataLoss`` option."""


class KinesisRangeUnavailableError(KinesisError):
    """The records a micro-batch planned can no longer be re-read."""


class KinesisInvalidOffsetError(KinesisError, ValueError):
    """An offset in a checkpoint, or a per-shard start position, cannot be read."""


class KinesisStreamsChangedError(KinesisError):
    """A checkpoint read streams that the query's ``streamName`` no longer names."""


class KinesisConsumerError(KinesisError):
    """An enhanced fan-out consumer could not be used: the stream has the most consumers it may have
    (``KINESIS_CONSUMER_LIMIT``), ``registeredConsumerId`` names none (``KINESIS_CONSUMER_NOT_FOUND``), or it did not
    become ACTIVE in time (``KINESIS_CONSUMER_NOT_ACTIVE``)."""


class KinesisRetriesExhaustedError(KinesisError):
    """A call kept failing (throttling, service errors) until the retry budget was spent."""


class KinesisReadStalledError(KinesisError):
    """A Trigger.AvailableNow or Trigger.Once query waited ``stallTimeout`` for shards whose readers made no
    progress (``KINESIS_READ_STALLED``): it fails, naming them, instead of running forever."""


class KinesisEndpointUnreachableError(KinesisError):
    """No connection could be opened to the Kinesis or STS endpoint: a wrong region or endpoint, or no network path."""


class KinesisServiceError(KinesisError):
    """Kinesis answered a call with an error that retrying does not fix."""


class KinesisRecordTooLargeError(KinesisError):
    """A record is larger than the stream accepts."""


class KinesisRecordRejectedError(KinesisError):
    """Kinesis refused a record with an error that retrying cannot fix (for example its encryption key)."""


class KinesisConnectorNotFoundError(KinesisError):
    """The Spark session (or the Spark Connect server) does not have the connector jar on its classpath."""


class KinesisVersionError(KinesisError):
    """The installed PySpark or jar does not match what this package was built for."""


class KinesisSchemaRegistryError(KinesisError):
    """A Glue Schema Registry call failed: no such schema or version, access denied, or another refusal."""


class KinesisDecodeError(KinesisError, ValueError):
    """A payload ``from_glue_schema_registry`` cannot decode (``mode=failfast``), a value
    ``to_glue_schema_registry`` cannot encode, or an item ``from_dynamodb_json`` cannot read into its schema."""


_BY_CONDITION: Dict[str, Type[KinesisError]] = {
    "KINESIS_UNKNOWN_OPTION": KinesisOptionError,
    "KINESIS_OPTION_NOT_APPLICABLE": KinesisOptionError,
    "KINESIS_MISSING_OPTION": KinesisOptionError,
    "KINESIS_INVALID_OPTION_VALUE": KinesisOptionError,
    "KINESIS_CONFLICTING_OPTIONS": KinesisOptionError,
    "KINESIS_OPTION_NOT_IN_REAL_TIME_MODE": KinesisOptionError,
    "KINESIS_INVALID_STREAM_NAME": KinesisOptionError,
    "KINESIS_USER_SCHEMA_NOT_ALLOWED": KinesisOptionError,
    "KINESIS_UNSUPPORTED_OPTION": KinesisOptionError,
    "KINESIS_INVALID_TABLE_PROPERTY": KinesisOptionError,
    "KINESIS_CATALOG_CHANGE_NOT_ALLOWED": KinesisOptionError,
    "KINESIS_INVALID_SINK_SCHEMA": KinesisSchemaError,
    "KINESIS_INVALID_SINK_ROW": KinesisInvalidRowError,
    "KINESIS_STREAM_NOT_FOUND": KinesisStreamNotFoundError,
    "KINESIS_DYNAMODB_STREAM_NOT_ENABLED": KinesisStreamNotFoundError,
    "KINESIS_ACCESS_DENIED": KinesisAccessDeniedError,
    "KINESIS_NO_CREDENTIALS": KinesisNoCredentialsError,
    "KINESIS_DATA_LOSS": KinesisDataLossError,
    "KINESIS_RANGE_UNAVAILABLE": KinesisRangeUnavailableError,
    "KINESIS_INVALID_OFFSET": KinesisInvalidOffsetError,
    "KINESIS_FOREIGN_CHECKPOINT": KinesisInvalidOffsetError,
    "KINESIS_STREAMS_CHANGED": KinesisStreamsChangedError,
    "KINESIS_RETRIES_EXHAUSTED": KinesisRetriesExhaustedError,
    "KINESIS_SHARD_LISTING_BEHIND": KinesisServiceError,
    "KINESIS_READ_STALLED": KinesisReadStalledError,
    "KINESIS_CONSUMER_LIMIT": KinesisConsumerError,
    "KINESIS_CONSUMER_NOT_FOUND": KinesisConsumerError,
    "KINESIS_CONSUMER_NOT_ACTIVE": KinesisConsumerError,
    "KINESIS_ENDPOINT_UNREACHABLE": KinesisEndpointUnreachableError,
    "KINESIS_SERVICE_ERROR": KinesisServiceError,
    "KINESIS_STREAM_NOT_ACTIVE": KinesisServiceError,
    "KINESIS_RECORD_TOO_LARGE": KinesisRecordTooLargeError,
    "KINESIS_RECORD_REJECTED": KinesisRecordRejectedError,
    "KINESIS_INVALID_SCHEMA": KinesisSchemaError,
    "KINESIS_SCHEMA_REGISTRY_ERROR": KinesisSchemaRegistryError,
    "KINESIS_SCHEMA_DECODE_FAILED": KinesisDecodeError,
    "KINESIS_SCHEMA_ENCODE_FAILED": KinesisDecodeError,
    "KINESIS_DYNAMODB_JSON_UNREADABLE": KinesisDecodeError,
    # Raised by this package only, never by the JVM.
    "KINESIS_CONNECTOR_NOT_FOUND": KinesisConnectorNotFoundError,
    "KINESIS_VERSION_MISMATCH": KinesisVersionError,
}

# The condition at the start of a connector message; read only where Spark does not report the condition (below).
_CONDITION = re.compile(r"\[(KINESIS_[A-Z_]+)\]\s*([^\n]*)")
# Spark's own error when no data source answers to format("kinesis") or to the provider's class name (which the
# helpers of spark_kinesis.io use): the jar is not on the classpath.
_NO_DATA_SOURCE = re.compile(r"\[DATA_SOURCE_NOT_FOUND\][^\n]*(\bkinesis\b|io\.sparkkinesis\.KinesisSourceProvider)")
# How deep a JVM exception's causes are searched (a streaming query's failure wraps the task's in a few levels).
_MAX_JVM_CAUSES = 20

CONNECTOR_NOT_FOUND_MESSAGE = (
    "[KINESIS_CONNECTOR_NOT_FOUND] The spark-kinesis connector jar is not on this Spark session's classpath. "
    "For a session this process starts, build it with configure_spark_with_kinesis(SparkSession.builder...) "
    "before getOrCreate(); for spark-submit or a Spark Connect server, start it with "
    "--jars \"$(python -m spark_kinesis jar)\".")


def _chain(exc: BaseException) -> List[BaseException]:
    """``exc`` and every exception it was raised from, outermost first."""
    seen = set()
    current: Optional[BaseException] = exc
    chain = []
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def _texts(exc: BaseException) -> List[str]:
    """The messages of ``exc`` and of every exception it was raised from, outermost first."""
    texts = []
    for current in _chain(exc):
        texts.append(str(current))
        for attr in ("desc", "message"):  # Py4J's and older PySpark's exceptions keep the JVM message here
            value = getattr(current, attr, None)
            if isinstance(value, str):
                texts.append(value)
    return texts


def _pyspark_condition(exc: BaseException) -> Optional[str]:
    """The condition PySpark reports for ``exc``: ``getCondition()`` on PySpark 4, ``getErrorClass()`` on 3.5, for
    its classic (captured) and Spark Connect exceptions alike; ``None`` for other exceptions."""
    method = getattr(exc, "getCondition", None) or getattr(exc, "getErrorClass", None)
    if not callable(method):
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # getErrorClass is deprecated on PySpark 4
            value = method()
    except Exception:  # noqa: BLE001 - a classic exception whose JVM is gone has nothing to say
        return None
    return value if isinstance(value, str) else None


def _jvm_conditions(exc: BaseException) -> Iterator[str]:
    """Classic PySpark: the conditions of the JVM exception behind ``exc`` and of its causes, outermost first.

    PySpark keeps the JVM exception in ``java_exception`` (a ``Py4JJavaError``, which is what PySpark raises for a
    JVM exception it has no class for, such as the connector's ``KinesisException``) or ``_origin`` (its own
    classes). A streaming query's or a job's failure wraps the connector's error, so its causes are asked too,
    through the same ``SparkThrowable`` methods PySpark calls.
    """
    throwable: Any = getattr(exc, "java_exception", None)
    if throwable is None:
        throwable = getattr(exc, "_origin", None)
    if throwable is None:
        return
    try:
        import pyspark
        from py4j.java_gateway import is_instance_of  # type: ignore[import-untyped]
        from pyspark import SparkContext

        gateway = SparkContext._gateway
        if gateway is None:
            return
        spark4 = int(pyspark.__version__.split(".")[0]) >= 4
        for _ in range(_MAX_JVM_CAUSES):
            if throwable is None:
                return
            if is_instance_of(gateway, throwable, "org.apache.spark.SparkThrowable"):
                condition = throwable.getCondition() if spark4 else throwable.getErrorClass()
                if isinstance(condition, str):
                    yield condition
            throwable = throwable.getCause()
    except Exception:  # noqa: BLE001 - the JVM may be gone (a stopped session); nothing more to learn from it
        return


def condition_of(exc: BaseException) -> Optional[str]:
    """The connector condition (``KINESIS_...``) that Spark reports for ``exc`` or an exception it was raised from,
    or ``None``.

    Classic PySpark reports the condition of every JVM exception in the chain; Spark Connect reports the outermost
    server exception's condition on PySpark 4, and none at all on PySpark 3.5 (its client drops it). Where Spark
    reports none, the condition at the start of the connector's message is read instead (see :func:`from_exception`).
    """
    if isinstance(exc, KinesisError):
        return exc.condition
    for current in _chain(exc):
        reported = _pyspark_condition(current)
        if reported and reported.startswith("KINESIS_"):
            return reported
        for condition in _jvm_conditions(current):
            if condition.startswith("KINESIS_"):
                return condition
    return None


def _message_line(texts: List[str], condition: Optional[str]) -> Optional[re.Match[str]]:
    """The first ``[KINESIS_...] message`` line of ``texts`` (of ``condition`` when given)."""
    for text in texts:
        for match in _CONDITION.finditer(text):
            if condition is None or match.group(1) == condition:
                return match
    return None


def from_exception(exc: BaseException) -> Optional[KinesisError]:
    """The connector error inside ``exc``, or ``None`` when there is none.

    ``exc`` may be any exception: PySpark's (classic or Spark Connect), Py4J's, a ``StreamingQueryException``,
    or one of this module's. The class is chosen by the condition Spark reports (:func:`condition_of`). Where
    Spark reports none, the bracketed condition at the start of the connector's message is used: under Spark
    Connect on PySpark 3.5, whose client drops every server exception's condition, and under Spark Connect on
    PySpark 4 for an error wrapped in another (a failed streaming query, a failed job), whose client keeps only
    the outermost exception's condition. The result is an instance of the class for the condition (with the
    condition's message line), :class:`KinesisConnectorNotFoundError` when Spark found no ``kinesis`` data
    source, or :class:`KinesisError` for a condition this version does not know.
    """
    if isinstance(exc, KinesisError):
        return exc
    texts = _texts(exc)
    condition = condition_of(exc)
    match = _message_line(texts, condition)
    if condition is None and match is not None:
        condition = match.group(1)
    if condition is not None:
        cls = _BY_CONDITION.get(condition, KinesisError)
        if match:
            detail = match.group(2).strip()
        else:
            detail = next((line.strip() for line in texts[0].splitlines() if line.strip()), "")
        return cls(f"[{condition}] {detail}", condition)
    if any(_NO_DATA_SOURCE.search(text) for text in texts):
        return KinesisConnectorNotFoundError(CONNECTOR_NOT_FOUND_MESSAGE, "KINESIS_CONNECTOR_NOT_FOUND")
    return None


@contextmanager
def translate_errors() -> Iterator[None]:
    """Re-raise connector errors from the JVM as this module's classes (chained to the original)."""
    try:
        yield
    except KinesisError:
        raise
    except Exception as exc:  # noqa: BLE001 - inspected, then re-raised
        error = from_exception(exc)
        if error is None:
            raise
        raise error from exc
