"""Checks keyword arguments against the connector's option registry before the JVM is touched.

Errors name what the caller wrote (``endpoint_url``, ``max_records_per_trigger``), not the option it sets.
"""

from __future__ import annotations

import datetime as _dt
import difflib
import re
from typing import Dict, Iterable, List, Mapping, Optional, Tuple, Union

from spark_kinesis._option_info import OptionInfo
from spark_kinesis.errors import KinesisOptionError
from spark_kinesis.options import FOREIGN_OPTIONS, OPTIONS, STREAM_ARN_PATTERN, STREAM_NAME_PATTERN

__all__ = ["mentions", "normalize", "stream_names"]


def _fold(name: str) -> str:
    """A name without case or underscores: ``max_records_per_trigger`` and ``maxRecordsPerTrigger`` meet."""
    return name.replace("_", "").lower()


_BY_FOLDED: Dict[str, OptionInfo] = {_fold(name): info for name, info in OPTIONS.items()}

# Other connectors' names (Databricks', qubole kinesis-sql's): passed on as written, for the connector to read.
_FOREIGN_BY_FOLDED: Dict[str, str] = {_fold(name): name for name in FOREIGN_OPTIONS}

# The connector's rules for a stream (io.sparkkinesis.aws.StreamRef), generated into spark_kinesis.options.
_STREAM_NAME = re.compile(STREAM_NAME_PATTERN)
_STREAM_ARN = re.compile(STREAM_ARN_PATTERN)

_DURATION = re.compile(r"\s*\d+\s*(ms|s|m|h)?\s*", re.IGNORECASE)
_BYTES = re.compile(r"\s*\d+\s*([kmg]i?b?|b)?\s*", re.IGNORECASE)
_TIMESTAMP = re.compile(r"\s*(\d+|\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2}))\s*",
                        re.IGNORECASE)

# The Python values an option takes besides the text the connector describes (OptionInfo.describe).
_PYTHON_VALUES: Dict[str, str] = {
    "duration": " (or a datetime.timedelta)",
    "timestamp": ", or a timezone-aware datetime.datetime",
}


def _describe(info: OptionInfo) -> str:
    """What a value of the option must be: the connector's words, plus the Python values it takes."""
    return info.describe + _PYTHON_VALUES.get(info.type, "")


def _error(condition: str, message: str) -> KinesisOptionError:
    return KinesisOptionError(f"[{condition}] {message}", condition)


def _suggest(name: str) -> str:
    folded = _fold(name)
    close = difflib.get_close_matches(folded, list(_BY_FOLDED), n=3, cutoff=0.8)
    names = [_BY_FOLDED[c].name for c in close]
    if len(names) == 1:
        return f" Did you mean '{names[0]}'?"
    if names:
        return " Did you mean one of " + ", ".join(f"'{n}'" for n in names) + "?"
    return ""


def _text(info: OptionInfo, shown: str, value: object) -> str:
    """The option text for a Python value: booleans as true/false, datetimes and timedeltas converted."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, _dt.timedelta):
        if info.type != "duration":
            raise _error("KINESIS_INVALID_OPTION_VALUE",
                         f"Option '{shown}' takes {_describe(info)}, not a timedelta.")
        return f"{int(value / _dt.timedelta(milliseconds=1))}ms"
    if isinstance(value, _dt.datetime):
        if info.type != "timestamp":
            raise _error("KINESIS_INVALID_OPTION_VALUE",
                         f"Option '{shown}' takes {_describe(info)}, not a datetime.")
        if value.tzinfo is None or value.utcoffset() is None:
            raise _error("KINESIS_INVALID_OPTION_VALUE",
                         f"Option '{shown}' has the naive datetime {value.isoformat()!r}; give it a timezone, "
                         "e.g. datetime(2026, 1, 31, 12, 0, tzinfo=timezone.utc).")
        return value.isoformat()
    return str(value)


def _problem(info: OptionInfo, value: str) -> Optional[str]:
    """What ``value`` must be instead, or ``None`` when it is well formed (ranges of sizes and durations are
    checked by the connector when the query starts)."""
    text = value.strip()
    kind = info.type
    if kind == "boolean":
        valid = text.lower() in ("true", "false")
    elif kind == "enum":
        valid = not info.choices or text.lower() in info.choices
    elif kind in ("int", "long"):
        try:
            number: Optional[int] = int(text)
        except ValueError:
            number = None
        valid = number is not None and (info.minimum is None or number >= info.minimum) and (
            info.maximum is None or number <= info.maximum)
    elif kind == "string":
        valid = bool(text)
    elif kind == "duration":
        valid = _DURATION.fullmatch(value) is not None
    elif kind == "bytes":
        valid = _BYTES.fullmatch(value) is not None
    elif kind == "timestamp":
        valid = _TIMESTAMP.fullmatch(value) is not None
    else:
        valid = True
    return None if valid else _describe(info)


def normalize(arguments: Iterable[Tuple[str, object]], scope: str,
              aliases: Mapping[str, str] = {}) -> Dict[str, str]:
    """Turn ``(keyword, value)`` pairs into connector options, or raise :class:`KinesisOptionError`.

    A keyword is an option name in any case (``maxRecordsPerTrigger``, ``maxrecordspertrigger``), in snake case
    (``max_records_per_trigger``), or a key of ``aliases`` (a Python argument name mapped to the option it sets).
    ``None`` values are left out. Every error names the keyword as written.
    """
    options: Dict[str, str] = {}
    given_as: Dict[str, str] = {}
    for keyword, value in arguments:
        if value is None:
            continue
        info = _BY_FOLDED.get(_fold(aliases.get(keyword, keyword)))
        foreign = _FOREIGN_BY_FOLDED.get(_fold(keyword))
        if info is None and foreign is not None:
            options[foreign] = "true" if value is True else "false" if value is False else str(value)
            continue
        if info is None:
            raise _error("KINESIS_UNKNOWN_OPTION",
                         f"Unknown option '{keyword}'.{_suggest(keyword)} See docs/options.md for every option.")
        if info.name in given_as:
            raise _error("KINESIS_CONFLICTING_OPTIONS",
                         f"'{given_as[info.name]}' and '{keyword}' both set the option '{info.name}'; give it once.")
        # A catalog takes every option but the schema registry functions': its own, the connection's, and defaults
        # for its tables' reads and writes. The functions take the connection's and their own.
        if (info.scope == "schemaregistry" and scope != info.scope) or \
                (scope != "catalog" and info.scope not in ("both", scope)):
            raise _error("KINESIS_OPTION_NOT_APPLICABLE",
                         f"Option '{keyword}' applies to the Kinesis {info.scope} only, not to the {scope}. Remove it.")
        text = _text(info, keyword, value)
        problem = _problem(info, text)
        if problem:
            shown = "(hidden)" if info.secret else repr(text)
            raise _error("KINESIS_INVALID_OPTION_VALUE",
                         f"Option '{keyword}' has the value {shown}, but it must be {problem}.")
        given_as[info.name] = keyword
        options[info.name] = text
    return options


def mentions(options: Mapping[str, object], option: str) -> bool:
    """Whether ``options`` (keyword arguments) set ``option`` under any spelling."""
    return any(_fold(keyword) == _fold(option) for keyword in options)


def stream_names(stream: Union[str, Iterable[str], None], argument: str = "stream") -> List[str]:
    """The stream names or ARNs in ``stream`` (a name, a comma-separated list, or an iterable), each checked."""
    if stream is None:
        return []
    if isinstance(stream, str):
        parts = stream.split(",")
    elif isinstance(stream, (bytes, Mapping)):
        raise _error("KINESIS_INVALID_STREAM_NAME",
                     f"Argument '{argument}' must be a stream name or ARN, or a list of them, "
                     f"not {type(stream).__name__}.")
    else:
        parts = [str(s) for s in stream]
    names = []
    for part in (p.strip() for p in parts):
        if not part:
            continue
        if not (_STREAM_NAME.fullmatch(part) or _STREAM_ARN.fullmatch(part)):
            raise _error("KINESIS_INVALID_STREAM_NAME",
                         f"Stream '{part}' in argument '{argument}' is neither a stream name (1-128 characters of "
                         "a-z, A-Z, 0-9, '_', '.', '-') nor a stream ARN (arn:aws:kinesis:<region>:<account>:"
                         "stream/<name>).")
        if part not in names:
            names.append(part)
    return names
