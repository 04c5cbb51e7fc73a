"""Checks keyword arguments against the connector's option registry before the JVM is touched."""

from __future__ import annotations

import difflib
from typing import Dict, Mapping

from spark_kinesis.errors import KinesisOptionError
from spark_kinesis.options import OPTIONS

_BY_KEY = {name.lower(): info for name, info in OPTIONS.items()}


def validate(options: Mapping[str, str], scope: str, arguments: Mapping[str, str]) -> Dict[str, str]:
    """Return ``options`` unchanged if every name is known for ``scope`` and every value well formed.

    ``arguments`` maps option names to the Python keyword that set them (``endpointUrl`` -> ``endpoint_url``),
    so errors name what the caller wrote.
    """
    for name, value in options.items():
        shown = arguments.get(name, name)
        info = _BY_KEY.get(name.lower())
        if info is None:
            close = difflib.get_close_matches(name, list(OPTIONS), n=3, cutoff=0.8)
            if len(close) == 1:
                hint = f" Did you mean '{close[0]}'?"
            elif close:
                hint = " Did you mean one of " + ", ".join(f"'{c}'" for c in close) + "?"
            else:
                hint = ""
            raise KinesisOptionError(
                f"[KINESIS_UNKNOWN_OPTION] Unknown option '{shown}'.{hint} See docs/options.md for every option.",
                "KINESIS_UNKNOWN_OPTION")
        if info.scope not in ("both", scope):
            raise KinesisOptionError(
                f"[KINESIS_OPTION_NOT_APPLICABLE] Option '{shown}' applies to the Kinesis {info.scope} only, "
                f"not to the {scope}. Remove it.", "KINESIS_OPTION_NOT_APPLICABLE")
        problem = _check_value(info, value)
        if problem:
            display = "(hidden)" if info.secret else repr(value)
            raise KinesisOptionError(
                f"[KINESIS_INVALID_OPTION_VALUE] Option '{shown}' has the value {display}, but it must be {problem}.",
                "KINESIS_INVALID_OPTION_VALUE")
    return dict(options)


def _check_value(info, value: str):
    text = value.strip()
    if info.type == "boolean" and text.lower() not in ("true", "false"):
        return "true or false"
    if info.type == "enum" and info.choices and text.lower() not in info.choices:
        return "one of " + ", ".join(info.choices)
    if info.type in ("int", "long"):
        try:
            number = int(text)
        except ValueError:
            return f"a whole number from {info.minimum} to {info.maximum}"
        if (info.minimum is not None and number < info.minimum) or (info.maximum is not None and number > info.maximum):
            return f"a whole number from {info.minimum} to {info.maximum}"
    if info.type == "string" and not text:
        return "a non-empty string"
    return None
