"""Putting the connector on a Spark session's classpath."""

from __future__ import annotations

from pyspark.sql import SparkSession

import pyspark

from spark_kinesis._jar import check_versions, jar_path

__all__ = ["configure_spark_with_kinesis"]


def configure_spark_with_kinesis(builder: SparkSession.Builder) -> SparkSession.Builder:
    """Add the bundled connector jar to ``spark.jars`` of a session builder and return the builder.

    Jars already listed in ``spark.jars`` are kept. The jar must be on the classpath before the JVM starts,
    so call this before ``getOrCreate()``; a session that is already running cannot gain it. Raises
    :class:`spark_kinesis.errors.KinesisVersionError` when the installed PySpark is not the Spark version the jar
    was built for.

    Example::

        from pyspark.sql import SparkSession
        from spark_kinesis import configure_spark_with_kinesis

        spark = configure_spark_with_kinesis(
            SparkSession.builder.appName("orders").master("local[2]")
        ).getOrCreate()
    """
    check_versions(pyspark.__version__)
    jar = jar_path()
    existing = getattr(builder, "_options", {}).get("spark.jars", "")  # the builder keeps its settings here
    jars = [j for j in existing.split(",") if j.strip()]
    if jar not in jars:
        jars.append(jar)
    return builder.config("spark.jars", ",".join(jars))
