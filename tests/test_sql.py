"""Kinesis from Spark SQL (docs/sql.md): a stream as a table of the session catalog and of a Kinesis catalog, and
``read_kinesis``, as every PySpark line has them."""

from __future__ import annotations

import uuid

import pytest

from conftest import connector_options
from harness import streams
from harness.waiting import wait_for
from spark_kinesis import configure_spark_with_kinesis


def _select_then_insert(spark, kinesis, table: str, stream: str, written, inserts: int) -> None:
    """`SELECT` on `table` reads `written` (what the stream holds), and `INSERT INTO` it puts `inserts` rows
    ("w0", "w1", ...) into `stream`, read back with boto3."""
    rows = spark.sql(f"SELECT CAST(data AS STRING) AS d, partitionKey FROM {table}").collect()
    assert sorted((r.d, r.partitionKey) for r in rows) == sorted(written)
    spark.sql(f"INSERT INTO {table} SELECT CONCAT('w', CAST(id AS STRING)) AS data, "
              f"CAST(id % 3 AS STRING) AS partitionKey FROM range({inserts})")
    inserted = {(d.decode(), k) for d, k in streams.data_set(streams.read_all(kinesis, stream)) if d.startswith(b"w")}
    assert inserted == {(f"w{i}", str(i % 3)) for i in range(inserts)}


@pytest.mark.compat
def test_a_session_catalog_table_reads_and_writes_its_stream_as_the_dataframe_api_does(
        spark, local_kinesis_server, stream_name):
    if spark.version.startswith("3."):
        pytest.skip("Spark 3.5's session catalog resolves only V1 sources for its tables (docs/sql.md)")
    kinesis = streams.client(local_kinesis_server)
    streams.create_stream(kinesis, stream_name, 2)
    written = [(f"r{i}", f"k{i % 7}") for i in range(200)]
    streams.put_records(kinesis, stream_name, written)
    options = dict(connector_options(local_kinesis_server), streamName=stream_name)
    table = f"orders_{uuid.uuid4().hex[:8]}"
    spark.sql(f"CREATE TABLE {table} USING kinesis OPTIONS ("
              + ", ".join(f"{k} '{v}'" for k, v in options.items()) + ")")
    try:
        _select_then_insert(spark, kinesis, table, stream_name, written, 50)
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {table}")


# A PySpark session given only the connector's jar (`--jars`, no `spark.sql.extensions`, no helper of the package), its
# connection from the AWS SDK's standard environment, as on Databricks: it reports what it found and counted.
JAR_ALONE = """
import json, sys
from pyspark.sql import SparkSession

stream, region = sys.argv[1], sys.argv[2]
spark = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
count = spark.sql(f"SELECT count(*) FROM read_kinesis(streamName => '{stream}', region => '{region}', "
                  "initialPosition => 'trim_horizon')").head()[0]
functions = sorted(f.name for f in spark.catalog.listFunctions() if f.name.endswith("_glue_schema_registry"))
print("REPORT " + json.dumps({"extensions": spark.conf.get("spark.sql.extensions", None), "count": count,
                              "functions": functions}))
spark.stop()
"""


@pytest.mark.compat
@pytest.mark.heavy  # a Spark JVM of its own: the default line and 3.5 (a jar of its own) run it in `make test`
@pytest.mark.jar_codecs
def test_read_kinesis_needs_only_the_jar_and_the_sdk_environment(kinesis_mock_server, stream_name, tmp_path):
    """(On PySpark 3.5 too: there it is the case that shows a classic PySpark session without the extensions, and
    the same read with them named, as configure_spark_with_kinesis names them on that line.)"""
    import json
    import os
    import subprocess
    import sys

    from spark_kinesis import jar_path

    kinesis = streams.client(kinesis_mock_server)
    streams.create_stream(kinesis, stream_name, 3)
    streams.put_records(kinesis, stream_name, [(f"r{i}", f"k{i % 11}") for i in range(240)])
    script = tmp_path / "jar_alone.py"
    script.write_text(JAR_ALONE, encoding="utf-8")
    o = connector_options(kinesis_mock_server)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "PYSPARK_", "SPARK_CONF"))}
    env.update(AWS_ENDPOINT_URL_KINESIS=o["endpointUrl"], AWS_ACCESS_KEY_ID=o["awsAccessKeyId"],
               AWS_SECRET_ACCESS_KEY=o["awsSecretKey"], AWS_EC2_METADATA_DISABLED="true", SPARK_LOCAL_IP="127.0.0.1",
               PYSPARK_SUBMIT_ARGS=f"--jars {jar_path()} --conf spark.driver.host=127.0.0.1 pyspark-shell")
    import pyspark

    if pyspark.__version__.startswith("3."):
        # PySpark 3.5 makes its classic JVM session with a constructor that applies spark.sql.extensions only
        # (Spark's builder also loads extensions from jars): there the session needs them named (docs/sql.md).
        without = subprocess.run([sys.executable, str(script), stream_name, o["region"]], cwd=tmp_path, env=env,
                                 capture_output=True, text=True, timeout=300)
        assert without.returncode != 0 and "read_kinesis" in without.stderr, without.stdout[-2000:]
        env["PYSPARK_SUBMIT_ARGS"] = env["PYSPARK_SUBMIT_ARGS"].replace(
            " pyspark-shell", " --conf spark.sql.extensions=io.sparkkinesis.KinesisSparkExtensions pyspark-shell")
    result = subprocess.run([sys.executable, str(script), stream_name, o["region"]], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=300)
    reports = [line[len("REPORT "):] for line in result.stdout.splitlines() if line.startswith("REPORT ")]
    assert result.returncode == 0 and reports, result.stdout[-2000:] + result.stderr[-4000:]
    report = json.loads(reports[0])
    extensions = "io.sparkkinesis.KinesisSparkExtensions" if pyspark.__version__.startswith("3.") else None
    assert report == {"extensions": extensions, "count": 240,
                      "functions": ["from_glue_schema_registry", "to_glue_schema_registry"]}, report


@pytest.mark.compat
@pytest.mark.jar_codecs
def test_read_kinesis_in_sql_reads_the_stream_with_databricks_argument_names(spark, local_kinesis_server, stream_name):
    # The tests' session is made by configure_spark_with_kinesis, which names no extensions (but on PySpark 3.5):
    # the jar brings them.
    assert spark.conf.get("spark.sql.extensions", None) is None or spark.version.startswith("3.")
    kinesis = streams.client(local_kinesis_server)
    streams.create_stream(kinesis, stream_name, 2)
    written = [(f"r{i}", f"k{i % 5}") for i in range(150)]
    streams.put_records(kinesis, stream_name, written)
    o = connector_options(local_kinesis_server)
    rows = spark.sql(
        f"SELECT CAST(data AS STRING) AS d, partitionKey FROM read_kinesis(streamName => '{stream_name}', "
        f"endpointUrl => '{o['endpointUrl']}', region => '{o['region']}', awsAccessKey => '{o['awsAccessKeyId']}', "
        f"awsSecretKey => '{o['awsSecretKey']}', cborEnabled => {o['cborEnabled']})").collect()
    assert sorted((r.d, r.partitionKey) for r in rows) == sorted(written)


@pytest.mark.compat
@pytest.mark.jar_codecs
def test_a_kinesis_catalog_lists_reads_writes_and_streams_its_streams(spark, local_kinesis_server, stream_name,
                                                                      tmp_path):
    """The catalog configure_spark_with_kinesis registers, on every PySpark line (Spark 3.5 included): its settings
    are the session's, so the running session takes them before the catalog's first use."""
    from pyspark.sql import SparkSession

    kinesis = streams.client(local_kinesis_server)
    streams.create_stream(kinesis, stream_name, 2)
    written = [(f"r{i}", f"k{i % 7}") for i in range(200)]
    streams.put_records(kinesis, stream_name, written)
    name = f"kin_{uuid.uuid4().hex[:8]}"
    built = configure_spark_with_kinesis(SparkSession.builder, catalog=name, initial_position="trim_horizon",
                                         **connector_options(local_kinesis_server))
    for key, value in built._options.items():
        if key.startswith(f"spark.sql.catalog.{name}"):
            spark.conf.set(key, value)

    listed = [r.tableName for r in spark.sql(f"SHOW TABLES IN {name} LIKE '{stream_name}'").collect()]
    assert listed == [stream_name]
    table = f"{name}.`{stream_name}`"
    _select_then_insert(spark, kinesis, table, stream_name, written, 40)

    out = f"catalog_read_{uuid.uuid4().hex[:8]}"
    query = (spark.readStream.table(table)
             .selectExpr("CAST(data AS STRING) AS d").writeStream.format("memory").queryName(out)
             .option("checkpointLocation", str(tmp_path / "checkpoint")).trigger(availableNow=True).start())
    wait_for(lambda: not query.isActive, 180, "the AvailableNow read of the catalog's table")
    assert query.exception() is None
    got = sorted(r.d for r in spark.sql(f"SELECT d FROM {out}").collect())
    assert got == sorted([d for d, _ in written] + [f"w{i}" for i in range(40)])

    # Spark 4.1's SQL reads a table as a stream with STREAM: the same streaming read.
    if tuple(int(p) for p in spark.version.split(".")[:2]) >= (4, 1):
        streamed = spark.sql(f"SELECT CAST(data AS STRING) AS d FROM STREAM {table}")
        assert streamed.isStreaming
        sql_out = f"catalog_sql_read_{uuid.uuid4().hex[:8]}"
        sql_query = (streamed.writeStream.format("memory").queryName(sql_out)
                     .option("checkpointLocation", str(tmp_path / "sql-checkpoint")).trigger(availableNow=True).start())
        wait_for(lambda: not sql_query.isActive, 180, "the AvailableNow read of STREAM <table>")
        assert sql_query.exception() is None
        assert sorted(r.d for r in spark.sql(f"SELECT d FROM {sql_out}").collect()) == got

    # A streaming write into another of the catalog's streams: toTable, every record once.
    copy = f"{stream_name[:100]}-copy"
    streams.create_stream(kinesis, copy, 1)
    write = (spark.readStream.table(table).select("data", "partitionKey").writeStream
             .option("checkpointLocation", str(tmp_path / "copy")).trigger(availableNow=True)
             .toTable(f"{name}.`{copy}`"))
    wait_for(lambda: not write.isActive, 180, "the AvailableNow copy into the catalog's table")
    assert write.exception() is None
    copied = sorted(d.decode() for d, _ in streams.data_set(streams.read_all(kinesis, copy)))
    assert copied == got

    described = "\n".join(str(r) for r in spark.sql(f"DESCRIBE TABLE EXTENDED {table}").collect())
    assert "shardCount=2" in described and "local-test-secret" not in described


@pytest.mark.compat
def test_stream_read_kinesis_is_a_streaming_read_where_spark_parses_it(spark, kinesalite_server, stream_name, tmp_path):
    """`STREAM read_kinesis(...)`: Spark 4.2+ parses it, and the connector's extensions make it the streaming read
    (Spark's own resolution would make it a batch one); older lines refuse it when parsing (docs/sql.md)."""
    kinesis = streams.client(kinesalite_server)
    streams.create_stream(kinesis, stream_name, 2)
    written = [(f"r{i}", f"k{i % 5}") for i in range(120)]
    streams.put_records(kinesis, stream_name, written)
    o = connector_options(kinesalite_server)
    statement = (f"SELECT CAST(data AS STRING) AS d FROM STREAM read_kinesis(streamName => '{stream_name}', "
                 f"initialPosition => 'trim_horizon', endpointUrl => '{o['endpointUrl']}', region => '{o['region']}', "
                 f"awsAccessKey => '{o['awsAccessKeyId']}', awsSecretKey => '{o['awsSecretKey']}', "
                 f"cborEnabled => {o['cborEnabled']})")
    if tuple(int(p) for p in spark.version.split(".")[:2]) < (4, 2):
        with pytest.raises(Exception, match="PARSE_SYNTAX_ERROR|mismatched input|Syntax error"):
            spark.sql(statement)
        return
    read = spark.sql(statement)
    assert read.isStreaming
    out = f"tvf_stream_{uuid.uuid4().hex[:8]}"
    query = (read.writeStream.format("memory").queryName(out).option("checkpointLocation", str(tmp_path / "c"))
             .trigger(availableNow=True).start())
    wait_for(lambda: not query.isActive, 180, "the AvailableNow read of STREAM read_kinesis(...)")
    assert query.exception() is None
    assert sorted(r.d for r in spark.sql(f"SELECT d FROM {out}").collect()) == sorted(d for d, _ in written)
