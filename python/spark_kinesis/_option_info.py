"""The shape of one entry of the generated option table (see ``spark_kinesis.options``)."""

from __future__ import annotations

from typing import NamedTuple, Optional, Tuple


class OptionInfo(NamedTuple):
    """What the connector's registry says of one option."""

    name: str
    type: str
    scope: str  # "source", "sink", "both" or "catalog"
    default: Optional[str]
    choices: Tuple[str, ...]
    minimum: Optional[int]
    maximum: Optional[int]
    secret: bool
    describe: str  # what a value must be, as the connector's errors say it ("a whole number from 1 to 500")
