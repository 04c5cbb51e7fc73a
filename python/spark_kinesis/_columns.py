"""The connector's column functions as PySpark calls them: in classic sessions through ``io.sparkkinesis.functions``
in the session's JVM, with Spark Connect by name, as the SQL functions of the connector's session extensions."""

from __future__ import annotations

from typing import Union

from pyspark.sql import Column
from pyspark.sql import functions as F

from spark_kinesis.errors import translate_errors

ColumnOrName = Union[Column, str]


def is_connect(column: ColumnOrName) -> bool:
    """Whether ``column`` (or, for a name, the active session) is Spark Connect's."""
    if isinstance(column, str):
        from pyspark.sql.utils import is_remote

        return bool(is_remote())
    return type(column).__module__.startswith("pyspark.sql.connect")


def by_name(name: str, *arguments: Column) -> Column:
    """The SQL function ``name`` (the session extension's), as Spark Connect calls it."""
    return F.call_function(name, *arguments)


def classic(method: str, column: ColumnOrName, *arguments: object) -> Column:
    """``io.sparkkinesis.functions.<method>`` called in the session's JVM: the column is resolved there, at once."""
    try:
        from pyspark.sql.classic.column import Column as ClassicColumn, _to_java_column  # PySpark 4
    except ImportError:  # PySpark 3.5
        from pyspark.sql.column import Column as ClassicColumn, _to_java_column  # type: ignore[attr-defined,no-redef,assignment]
    from pyspark import SparkContext

    context = SparkContext._active_spark_context
    if context is None:
        raise RuntimeError(f"{method} needs an active Spark session; create it first")
    functions = getattr(context._jvm, "io.sparkkinesis.functions")
    with translate_errors():
        java_column = getattr(functions, method)(_to_java_column(column), *arguments)
    return ClassicColumn(java_column)
