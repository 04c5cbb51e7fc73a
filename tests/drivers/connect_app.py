"""A Spark Connect client that uses spark_kinesis end to end; run by tests/test_connect.py as a subprocess.

PySpark's local Spark Connect server (``remote("local[2]")``) runs in a JVM that the client's own Python process
starts, and PySpark refuses it when that process already has a classic session (the pytest process has one), so
the Connect session lives in this separate process.

Usage: ``python tests/drivers/connect_app.py CONFIG_JSON`` with the keys

* ``remote``: ``local[2]`` (a local server started here, with the jar from ``configure_spark_with_kinesis``) or
  ``sc://localhost:PORT`` (a server started elsewhere with the jar; its token in SPARK_CONNECT_AUTHENTICATE_TOKEN);
* ``connection``: the connector options that reach the local Kinesis server (``endpointUrl``, ``region``, keys);
* ``source``, ``copy``: two existing streams; ``rows``: how many rows to write; ``workdir``: for checkpoints;
* ``timeout``: seconds each query may take (the session also has a Kinesis catalog ``kinesis`` on that server);
* ``errors_only`` (optional): only the calls on a missing stream, with what Spark Connect reports of their errors,
  and the schema registry round trip (``registry_forms``) when ``registry`` is given;
* ``registry`` (optional): options that reach a Glue Schema Registry (moto), a registered Avro schema ``schemaName``
  and its ``definition``, and a stream ``stream`` for the typed round trip (``registry_forms``).

The last line printed is a JSON object with what happened (see ``main``); the exit code is 0 unless a step
failed unexpectedly.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback

os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
os.environ.setdefault("AWS_EC2_METADATA_DISABLED", "true")
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)


def connect_session(remote: str, **catalog):
    from pyspark.sql import SparkSession

    from spark_kinesis import configure_spark_with_kinesis

    builder = SparkSession.builder.remote(remote)
    if remote.startswith("local"):
        # Settings of the local server PySpark starts in this process (the gRPC port is always 15002).
        builder = (builder.config("spark.connect.grpc.binding.address", "127.0.0.1")
                   .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
                   .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2"))
    # Adds the jar for a local server; returns the builder unchanged for an sc:// server.
    # `catalog`: a Kinesis catalog's name and options, session settings that both kinds of server take.
    return configure_spark_with_kinesis(builder, **catalog).getOrCreate()


def outcome(action):
    """``[class name, condition]`` of the spark_kinesis error that ``action`` raised (directly or inside a
    PySpark exception), or ``[class name, None]`` for another error, or ``None`` when nothing was raised."""
    from spark_kinesis.errors import KinesisError, from_exception

    try:
        action()
    except KinesisError as e:
        return [type(e).__name__, e.condition]
    except Exception as e:  # noqa: BLE001 - reported to the test
        found = from_exception(e)
        return [type(found).__name__, found.condition] if found else [type(e).__name__, None]
    return None


def reported(action):
    """What Spark Connect itself says of the error ``action`` raised: ``[PySpark's class, condition, SQLSTATE]`` of
    the PySpark exception (``getCondition()`` on PySpark 4, ``getErrorClass()`` on 3.5), and the spark_kinesis class
    that ``from_exception`` finds when it may not read the message (its condition only)."""
    import re

    from spark_kinesis import errors

    try:
        action()
    except Exception as e:  # noqa: BLE001 - reported to the test
        original = e.__cause__ if isinstance(e, errors.KinesisError) else e
        name = "getCondition" if hasattr(original, "getCondition") else "getErrorClass"
        condition = getattr(original, name)() if hasattr(original, name) else None
        sql_state = original.getSqlState() if hasattr(original, "getSqlState") else None
        text = errors._CONDITION
        errors._CONDITION = re.compile(r"(?!)")  # never matches: the message is out of reach
        try:
            found = errors.from_exception(original)
        finally:
            errors._CONDITION = text
        return [type(original).__name__, condition, sql_state, type(found).__name__ if found else None]
    return None


def missing_stream_calls(spark, connection: dict, endpoint: str, region: str) -> dict:
    """The helpers' calls on a stream that does not exist, each failing at the call."""
    from spark_kinesis import kinesis_stream, read_kinesis, write_kinesis

    return {
        # Under Connect, load() is lazy: the helpers ask for the schema, so a missing stream fails at the call.
        "missing_stream_batch": lambda: read_kinesis(spark, "no-such-stream", region=region, endpoint_url=endpoint,
                                                     **connection),
        "missing_stream_query": lambda: kinesis_stream(spark, "no-such-stream", region=region,
                                                       endpoint_url=endpoint, **connection),
        "missing_stream_write": lambda: write_kinesis(
            spark.createDataFrame([("k", "d")], "partitionKey string, data string"), "no-such-stream",
            region=region, endpoint_url=endpoint, **connection),
    }


def errors_only(config: dict) -> dict:
    """Only the missing-stream errors (what Spark Connect reports of them, and the classes the package raises) and,
    with ``registry``, the typed round trip: what the other PySpark lines check, in one Connect session."""
    import pyspark

    conn = dict(config["connection"])
    endpoint, region = conn.pop("endpointUrl"), conn.pop("region")
    spark = connect_session(config["remote"])
    calls = missing_stream_calls(spark, conn, endpoint, region)
    result = {"pyspark": pyspark.__version__, "session": type(spark).__module__,
              "errors": {what: outcome(call) for what, call in calls.items()},
              "reported": {what: reported(call) for what, call in calls.items()}}
    if config.get("registry"):
        result["registry"] = registry_forms(spark, config)
    spark.stop()
    return result


def sql_forms(spark, config: dict) -> dict:
    """The SQL forms (docs/sql.md) on the source stream, which holds the batch write's rows: the catalog's table read
    with SELECT and readStream.table, a stream created with CREATE TABLE and filled with INSERT INTO, read_kinesis,
    and a session catalog's table over the stream; each gives the rows it read as [partitionKey, data]."""
    o = config["connection"]
    table = f"kinesis.`{config['source']}`"
    pairs = "SELECT partitionKey, CAST(data AS STRING) AS data FROM "
    out = {"select": [list(r) for r in spark.sql(pairs + table).collect()]}
    query = (spark.readStream.table(table).selectExpr("partitionKey", "CAST(data AS STRING) AS data")
             .writeStream.format("memory").queryName("connect_sql_read")
             .option("checkpointLocation", os.path.join(config["workdir"], "sql-read"))
             .trigger(availableNow=True).start())
    out["stream_finished"] = bool(query.awaitTermination(config["timeout"]))
    out["stream"] = [list(r) for r in spark.table("connect_sql_read").collect()]
    created = f"kinesis.`{config['source']}-sql`"
    spark.sql(f"CREATE TABLE {created} TBLPROPERTIES ('shardCount' = '1')")
    spark.sql(f"INSERT INTO {created} SELECT data, partitionKey FROM {table}")
    out["insert"] = [list(r) for r in spark.sql(pairs + created).collect()]
    out["read_kinesis"] = [list(r) for r in spark.sql(
        pairs + f"read_kinesis(streamName => '{config['source']}', endpointUrl => '{o['endpointUrl']}', "
        f"region => '{o['region']}', awsAccessKey => '{o['awsAccessKeyId']}', awsSecretKey => '{o['awsSecretKey']}', "
        f"cborEnabled => {o['cborEnabled']})").collect()]
    # A table of the session catalog over the same stream (Spark 4: 3.5's session catalog takes no V2 source).
    options = ", ".join(f"{k} '{v}'" for k, v in dict(o, streamName=config["source"],
                                                         initialPosition="trim_horizon").items())
    spark.sql(f"CREATE TABLE connect_orders USING kinesis OPTIONS ({options})")
    out["session_table"] = [list(r) for r in spark.sql(pairs + "connect_orders").collect()]
    described = [str(r) for r in spark.sql(f"DESCRIBE TABLE EXTENDED {table}").collect()]
    out["describe_names_stream"] = any(config["source"] in line for line in described)
    out["describe_shows_secret"] = any(o["awsSecretKey"] in line for line in described)
    return out


def registry_forms(spark, config: dict) -> dict:
    """Typed payloads from a Connect client (docs/schema-registry.md): structs encoded with to_glue_schema_registry,
    written with the sink, read back with the source and decoded with from_glue_schema_registry, by the Python
    functions and in SQL; each gives [id, customer] rows."""
    from pyspark.sql import functions as F

    from spark_kinesis import from_glue_schema_registry, kinesis_stream, read_kinesis, to_glue_schema_registry, \
        write_kinesis

    r, o = dict(config["registry"]), config["connection"]
    stream, definition = r.pop("stream"), r.pop("definition")
    orders = spark.range(config["rows"]).selectExpr("id", "concat('c', id % 7) AS customer")
    framed = orders.select(to_glue_schema_registry(F.struct("id", "customer"), definition, r).alias("data"),
                           F.col("id").cast("string").alias("partitionKey"))
    write_kinesis(framed, stream, **o)
    read = read_kinesis(spark, stream, **o)
    out = {"python": [list(row) for row in read.select(from_glue_schema_registry("data", r).alias("o"))
                      .select("o.id", "o.customer").collect()]}
    # The same records read by a streaming query (AvailableNow) and decoded in its micro-batches.
    query = (kinesis_stream(spark, stream, initial_position="trim_horizon", **o)
             .select(from_glue_schema_registry("data", r).alias("o")).select("o.id", "o.customer")
             .writeStream.format("memory").queryName("connect_typed_stream")
             .option("checkpointLocation", os.path.join(config["workdir"], "typed"))
             .trigger(availableNow=True).start())
    query.awaitTermination(config["timeout"])
    out["stream"] = [list(row) for row in spark.table("connect_typed_stream").collect()]
    read.createOrReplaceTempView("connect_typed")
    options = ", ".join(f"'{k}', '{v}'" for k, v in r.items())
    out["sql"] = [list(row) for row in spark.sql(
        f"SELECT o.id, o.customer FROM (SELECT from_glue_schema_registry(data, map({options})) AS o "
        "FROM connect_typed)").collect()]
    return out


def main(config: dict) -> dict:
    import pyspark

    from spark_kinesis import kinesis_stream, read_kinesis, write_kinesis

    started = time.monotonic()
    conn = dict(config["connection"])
    endpoint, region = conn.pop("endpointUrl"), conn.pop("region")
    timeout, workdir = config["timeout"], config["workdir"]
    spark = connect_session(config["remote"], catalog="kinesis", initial_position="trim_horizon",
                            allow_create_stream=True, **config["connection"])
    result = {"session": type(spark).__module__, "started_s": round(time.monotonic() - started, 1)}

    # A batch write: returns None once the rows are in the stream.
    rows = [(f"key-{i % 7}", f"record-{i}") for i in range(config["rows"])]
    batch = spark.createDataFrame(rows, "partitionKey string, data string")
    result["batch_write_returned"] = repr(write_kinesis(batch, config["source"], region=region,
                                                        endpoint_url=endpoint, **conn))

    # A streaming read with Trigger.AvailableNow into the memory sink, which the client then queries.
    source = kinesis_stream(spark, config["source"], region=region, endpoint_url=endpoint,
                            initial_position="trim_horizon", **conn)
    query = (source.selectExpr("partitionKey", "CAST(data AS STRING) AS data").writeStream.format("memory")
             .queryName("connect_read").option("checkpointLocation", os.path.join(workdir, "read"))
             .trigger(availableNow=True).start())
    result["read_finished"] = bool(query.awaitTermination(timeout))
    result["read"] = [[r.partitionKey, r.data] for r in spark.table("connect_read").collect()]

    # A streaming write: the returned writer copies the source stream into the other one.
    writer = write_kinesis(source.select("data", "partitionKey"), config["copy"], region=region,
                           endpoint_url=endpoint, **conn)
    result["writer"] = type(writer).__module__ + "." + type(writer).__name__
    copy = (writer.option("checkpointLocation", os.path.join(workdir, "copy"))
            .trigger(availableNow=True).start())
    result["copy_finished"] = bool(copy.awaitTermination(timeout))

    result["sql"] = sql_forms(spark, config)
    if config.get("registry"):
        result["registry"] = registry_forms(spark, config)

    # Errors: checked in Python before the server is asked; raised by the connector on the server.
    result["errors"] = {
        "misspelled_option": outcome(lambda: kinesis_stream(spark, config["source"], region=region,
                                                            endpoint_url=endpoint, maxRecordsPerTriger=10, **conn)),
        "extra_column": outcome(lambda: write_kinesis(
            spark.createDataFrame([("k", "d", 1)], "partitionKey string, data string, extra int"),
            config["copy"], region=region, endpoint_url=endpoint, **conn)),
        **{what: outcome(call) for what, call in missing_stream_calls(spark, conn, endpoint, region).items()},
    }
    result["reported"] = {what: reported(call) for what, call in
                          missing_stream_calls(spark, conn, endpoint, region).items()}
    result["pyspark"] = pyspark.__version__
    result["seconds"] = round(time.monotonic() - started, 1)
    spark.stop()
    return result


if __name__ == "__main__":
    try:
        config = json.loads(sys.argv[1])
        if config.get("errors_only"):
            result = errors_only(config)
        else:
            result = main(config)
        print(json.dumps(result), flush=True)
    except Exception:  # noqa: BLE001 - the test shows the traceback
        traceback.print_exc()
        sys.exit(1)
