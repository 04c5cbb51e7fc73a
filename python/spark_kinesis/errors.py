"""Python exceptions for the connector's error conditions.

Every error the connector raises carries a stable condition name in brackets at the start of its message, such as
``[KINESIS_STREAM_NOT_FOUND]``. The functions of this package raise the matching class below (chained to
PySpark's original exception); for errors that surface later, for example when a streaming query fails,
:func:`from_exception` finds the condition in any exception.

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
from contextlib import contextmanager
from typing import Dict, Iterator, Optional, Type

__all__ = [
    "KinesisError",
    "KinesisOptionError",
    "KinesisSchemaError",
    "KinesisStreamNotFoundError",
    "KinesisAccessDeniedError",
    "KinesisDataLossError",
    "KinesisRetriesExhaustedError",
    "KinesisRecordTooLargeError",
    "KinesisVersionError",
    "from_exception",
]


class KinesisError(Exception):
    """Base class of the connector's errors. ``condition`` is the bracketed name, e.g. ``KINESIS_DATA_LOSS``."""

    def __init__(self, message: str, condition: str = "KINESIS_ERROR") -> None:
        super().__init__(message)
        self.condition = condition


class KinesisOptionError(KinesisError, ValueError):
    """An option or keyword argument is unknown, missing, malformed, or conflicts with another."""


class KinesisSchemaError(KinesisError, ValueError):
    """The DataFrame given to the sink does not have the columns it needs."""


class KinesisStreamNotFoundError(KinesisError):
    """A stream does not exist, or is not visible with these credentials and region."""


class KinesisAccessDeniedError(KinesisError):
    """The credentials' policy does not allow a call the connector needs."""


class KinesisDataLossError(KinesisError):
    """Records the query should read are gone (trimmed by retention); see the ``failOnDataLoss`` option."""


class KinesisRetriesExhaustedError(KinesisError):
    """A call kept failing (throttling, service errors) until the retry budget was spent."""


class KinesisRecordTooLargeError(KinesisError):
    """A record is larger than the stream accepts."""


class KinesisVersionError(KinesisError):
    """The installed PySpark or jar does not match what this package was built for."""


_BY_CONDITION: Dict[str, Type[KinesisError]] = {
    "KINESIS_UNKNOWN_OPTION": KinesisOptionError,
    "KINESIS_OPTION_NOT_APPLICABLE": KinesisOptionError,
    "KINESIS_MISSING_OPTION": KinesisOptionError,
    "KINESIS_INVALID_OPTION_VALUE": KinesisOptionError,
    "KINESIS_CONFLICTING_OPTIONS": KinesisOptionError,
    "KINESIS_INVALID_STREAM_NAME": KinesisOptionError,
    "KINESIS_USER_SCHEMA_NOT_ALLOWED": KinesisOptionError,
    "KINESIS_INVALID_SINK_SCHEMA": KinesisSchemaError,
    "KINESIS_STREAM_NOT_FOUND": KinesisStreamNotFoundError,
    "KINESIS_ACCESS_DENIED": KinesisAccessDeniedError,
    "KINESIS_DATA_LOSS": KinesisDataLossError,
    "KINESIS_RETRIES_EXHAUSTED": KinesisRetriesExhaustedError,
    "KINESIS_RECORD_TOO_LARGE": KinesisRecordTooLargeError,
}

_CONDITION = re.compile(r"\[(KINESIS_[A-Z_]+)\]\s*([^\n]*)")


def from_exception(exc: BaseException) -> Optional[KinesisError]:
    """The connector error inside ``exc`` (PySpark, Py4J or streaming-query exceptions), or ``None``."""
    seen = set()
    current: Optional[BaseException] = exc
    texts = []
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        texts.append(str(current))
        for attr in ("desc", "message"):
            value = getattr(current, attr, None)
            if isinstance(value, str):
                texts.append(value)
        current = current.__cause__ or current.__context__
    for text in texts:
        match = _CONDITION.search(text)
        if match:
            condition = match.group(1)
            cls = _BY_CONDITION.get(condition, KinesisError)
            return cls(f"[{condition}] {match.group(2).strip()}", condition)
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
