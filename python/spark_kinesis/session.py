"""Putting the connector on a Spark session's classpath."""

from __future__ import annotations

import os
import re
from typing import Mapping, Optional

import pyspark
from pyspark.sql import SparkSession

from spark_kinesis._jar import check_versions, jar_path
from spark_kinesis._validate import _error, normalize
from spark_kinesis.options import OPTIONS

__all__ = ["configure_spark_with_kinesis"]


def _connect_server_url(options: Mapping[str, object]) -> Optional[str]:
    """The ``sc://`` URL of a Spark Connect server the builder connects to, or ``None`` when the session's JVM
    is started by this process (classic PySpark, or a local Spark Connect server: ``remote("local[2]")`` or
    ``spark.api.mode=connect``)."""
    url = options.get("spark.remote", os.environ.get("SPARK_REMOTE"))
    if url is not None and str(url).startswith("sc://"):
        return str(url)
    return None


#: The connector's Spark SQL extensions: the ``read_kinesis`` table-valued function and the schema registry functions
#: (docs/sql.md). Spark loads them from the jar by itself (the jar's service file); naming them in
#: ``spark.sql.extensions`` as well changes nothing.
EXTENSIONS = "io.sparkkinesis.KinesisSparkExtensions"

#: Spark's own ``spark.redaction.regex``, the names and values whose settings the Environment tab, the event log
#: and plans hide, when a builder does not set one.
SPARK_REDACTION_REGEX = "(?i)secret|password|token|access[.]?key"

#: The catalog whose tables are an account's streams (docs/sql.md, "The kinesis catalog").
CATALOG = "io.sparkkinesis.KinesisCatalog"

_CATALOG_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def configure_spark_with_kinesis(builder: SparkSession.Builder, catalog: Optional[str] = None,
                                 **catalog_options: object) -> SparkSession.Builder:
    """Add the bundled connector jar to ``spark.jars`` of a session builder, and the names of the connector's secret
    options that Spark's ``spark.redaction.regex`` does not match (``roleExternalId``) to that setting, and return the
    builder. The jar brings the connector's SQL functions with it (``read_kinesis``, the schema registry functions:
    docs/sql.md); on PySpark 3.5, whose classic sessions do not load extensions from jars, they are also added to
    ``spark.sql.extensions``. With ``catalog``, also register a
    Kinesis catalog of that name, whose tables are the streams of one account and region
    (``SELECT * FROM kinesis.orders``); ``catalog_options`` are its options (``region``, ``endpoint_url``,
    credentials, ``allow_alter_stream``, defaults for reads and writes such as ``initial_position``), in any
    spelling the connector's options take.

    Jars already listed, and a redaction pattern the builder sets, are kept. The jar must be on the classpath before
    the JVM starts,
    so call this before ``getOrCreate()``; a session that is already running cannot gain it.

    Works for classic sessions and for a local Spark Connect server that PySpark starts for you
    (``SparkSession.builder.remote("local[2]")``, or ``spark.api.mode`` set to ``connect``). A builder for a
    remote Spark Connect server (``remote("sc://host:15002")``) is returned unchanged: that server must have been
    started with the jar (``--jars "$(python -m spark_kinesis jar)"``); see docs/spark-connect.md.

    :raises spark_kinesis.errors.KinesisVersionError: when the installed PySpark is not the Spark version the
        jar was built for, or the jar is not this package's version.

    >>> from pyspark.sql import SparkSession
    >>> from spark_kinesis import configure_spark_with_kinesis
    >>> builder = configure_spark_with_kinesis(SparkSession.builder.appName("orders").master("local[2]"))
    >>> spark = builder.getOrCreate()  # doctest: +SKIP

    A local Spark Connect server started by PySpark gets the jar the same way:

    >>> builder = configure_spark_with_kinesis(SparkSession.builder.remote("local[2]"))
    >>> spark = builder.getOrCreate()  # doctest: +SKIP

    The streams of an account as the tables of catalog ``kinesis``:

    >>> builder = configure_spark_with_kinesis(SparkSession.builder, catalog="kinesis", region="eu-west-1")
    >>> spark = builder.getOrCreate()  # doctest: +SKIP
    >>> spark.sql("SELECT CAST(data AS STRING) FROM kinesis.orders").show()  # doctest: +SKIP

    :raises spark_kinesis.errors.KinesisOptionError: when ``catalog`` is not a plain SQL name, when catalog
        options are given without it, or when an option is unknown or its value is invalid.
    """
    settings = _catalog_settings(catalog, catalog_options)
    # PySpark sets a builder's settings through config() and remote(), but has no public way to read them back;
    # both builders (classic and Spark Connect) keep them in `_options`, which is only read here, never changed.
    options: Mapping[str, object] = getattr(builder, "_options", {})
    for key, value in settings.items():
        builder = builder.config(key, value)
    if _connect_server_url(options) is not None:
        # A remote server has the jar and the extensions from its own start; the catalog is a session's setting.
        return builder
    check_versions(pyspark.__version__)
    builder = (builder.config("spark.jars", _listing(options, "spark.jars", jar_path()))
               .config("spark.redaction.regex", redaction_regex(options.get("spark.redaction.regex"))))
    if pyspark.__version__.startswith("3."):
        # PySpark 3.5 builds its classic JVM session with a constructor that applies only spark.sql.extensions, not
        # the extensions Spark finds in jars (its Scala builder and PySpark 4 do both): name them there.
        builder = builder.config("spark.sql.extensions", _listing(options, "spark.sql.extensions", EXTENSIONS))
    return builder


def redaction_regex(current: Optional[object] = None) -> str:
    """``spark.redaction.regex`` that also hides every secret option of the connector (``current``, or Spark's own
    default, with the names it does not match added), so that a secret given as a setting (``--conf
    spark.sql.catalog.kinesis.roleExternalId=...``) stays out of the Spark UI's Environment tab and the event log.

    >>> from spark_kinesis.session import redaction_regex
    >>> redaction_regex()
    '(?i)secret|password|token|access[.]?key|roleExternalId'
    """
    pattern = str(current) if current else SPARK_REDACTION_REGEX
    ignoring_case = pattern.startswith("(?i)")

    def matched(name: str) -> bool:
        try:
            return re.search(pattern, name) is not None
        except re.error:  # Java syntax Python's re does not take: add every name (a second match costs nothing)
            return False

    missing = [name for name, info in OPTIONS.items() if info.secret and not matched(name)]
    # Option names are not case-sensitive: without a leading (?i) for the whole pattern, each name gets its own.
    return "|".join([pattern] + [re.escape(name) if ignoring_case else f"(?i:{re.escape(name)})" for name in missing])


def _catalog_settings(catalog: Optional[str], catalog_options: Mapping[str, object]) -> Mapping[str, str]:
    """The Spark settings that register catalog ``catalog`` with ``catalog_options``, checked."""
    if catalog is None:
        if catalog_options:
            raise _error("KINESIS_CONFLICTING_OPTIONS",
                         f"Options {sorted(catalog_options)} are a catalog's options: give the catalog's name too, "
                         "as in configure_spark_with_kinesis(builder, catalog='kinesis', region='eu-west-1').")
        return {}
    if not _CATALOG_NAME.fullmatch(catalog):
        raise _error("KINESIS_INVALID_OPTION_VALUE",
                     f"Argument 'catalog' has the value {catalog!r}, but it must be a plain SQL name (letters, digits "
                     "and underscores, not starting with a digit), such as 'kinesis'.")
    options = normalize(catalog_options.items(), "catalog")
    if "streamName" in options:
        raise _error("KINESIS_CONFLICTING_OPTIONS",
                     "Option 'streamName' is not a catalog option: each table of a Kinesis catalog is the stream it "
                     "is named after (SELECT ... FROM <catalog>.<stream>); remove it.")
    prefix = f"spark.sql.catalog.{catalog}"
    return {prefix: CATALOG, **{f"{prefix}.{name}": value for name, value in options.items()}}


def _listing(options: Mapping[str, object], key: str, item: str) -> str:
    """The comma-separated setting ``key`` of the builder with ``item`` added unless it is there already."""
    items = [i for i in str(options.get(key, "")).split(",") if i.strip()]
    if item not in (i.strip() for i in items):
        items.append(item)
    return ",".join(items)
