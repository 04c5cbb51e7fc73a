"""Putting the connector on a Spark session's classpath."""

from __future__ import annotations

import os
from typing import Mapping, Optional

import pyspark
from pyspark.sql import SparkSession

from spark_kinesis._jar import check_versions, jar_path

__all__ = ["configure_spark_with_kinesis"]


def _connect_server_url(options: Mapping[str, object]) -> Optional[str]:
    """The ``sc://`` URL of a Spark Connect server the builder connects to, or ``None`` when the session's JVM
    is started by this process (classic PySpark, or a local Spark Connect server: ``remote("local[2]")`` or
    ``spark.api.mode=connect``)."""
    url = options.get("spark.remote", os.environ.get("SPARK_REMOTE"))
    if url is not None and str(url).startswith("sc://"):
        return str(url)
    return None


#: The connector's Spark SQL extensions: the ``read_kinesis`` table-valued function (docs/sql.md).
EXTENSIONS = "io.sparkkinesis.KinesisSparkExtensions"


def configure_spark_with_kinesis(builder: SparkSession.Builder) -> SparkSession.Builder:
    """Add the bundled connector jar to ``spark.jars`` of a session builder, and the connector's SQL extensions
    (``read_kinesis``) to ``spark.sql.extensions``, and return the builder.

    Jars and extensions already listed are kept. The jar must be on the classpath before the JVM starts,
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
    """
    # PySpark sets a builder's settings through config() and remote(), but has no public way to read them back;
    # both builders (classic and Spark Connect) keep them in `_options`, which is only read here, never changed.
    options: Mapping[str, object] = getattr(builder, "_options", {})
    if _connect_server_url(options) is not None:
        return builder
    check_versions(pyspark.__version__)
    return (builder.config("spark.jars", _listing(options, "spark.jars", jar_path()))
            .config("spark.sql.extensions", _listing(options, "spark.sql.extensions", EXTENSIONS)))


def _listing(options: Mapping[str, object], key: str, item: str) -> str:
    """The comma-separated setting ``key`` of the builder with ``item`` added unless it is there already."""
    items = [i for i in str(options.get(key, "")).split(",") if i.strip()]
    if item not in (i.strip() for i in items):
        items.append(item)
    return ",".join(items)
