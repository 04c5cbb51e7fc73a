"""Issue 13.1, end to end: with a session token and AssumeRole through moto's STS, no log line of the driver or
its executor (one JVM in local mode) shows the token or the secret, whatever the log level does:

- DEBUG set before the session starts (``spark.log.level``);
- ``setLogLevel("DEBUG")`` after the first batch, once the connector's clients exist;
- a log4j2 configuration file that sets the root to DEBUG;
- SQL statements on a Kinesis catalog and a session table (``sql``), and the schema registry functions
  (``schema-registry``: their Glue calls signed with the assumed role), each with the event log (what the UI shows).

Each runs one short write and read in a JVM of its own, and greps every line it printed. Each also checks that
DEBUG logging was on and reached the AWS SDK (its request logger), so a leak had every chance to show.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from conftest import connector_options
from harness import streams
from test_sink_credentials import ROLE_ARN, moto_sts  # noqa: F401 (moto_sts is a fixture)

SECRET = "sEcReTkEy-13-1-do-not-log"
TOKEN = "SeSsIoNtOkEn-13-1-do-not-log"
# A secret that Spark's own redaction pattern does not match by its option's name (issue 49.5).
EXTERNAL_ID = "ExTeRnAlId-49-5-do-not-log"
RUN_TIMEOUT_S = 300

DRIVER = '''
import json, sys
from pyspark.sql import SparkSession
from spark_kinesis import configure_spark_with_kinesis, read_kinesis, write_kinesis

mode, options, stream, log4j2 = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3], sys.argv[4]
KEYS_AS_CONF = ("awsAccessKeyId", "awsSecretKey", "awsSessionToken", "roleExternalId")


def report(*words):
    # A file of its own: on the shared stdout a JVM log line written in pieces could split a report line.
    with open("report.txt", "a", encoding="utf-8") as out:
        print(*words, file=out)


builder = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
           .config("spark.ui.showConsoleProgress", "false")
           .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1"))
if mode == "debug-before-start":
    builder = builder.config("spark.log.level", "DEBUG")
if mode == "log4j2-file":
    builder = builder.config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile=file:{log4j2}")
if mode == "sql":
    # The event log holds what the Spark UI and the history server show: plans, descriptions, settings.
    builder = (builder.config("spark.log.level", "DEBUG").config("spark.eventLog.enabled", "true")
               .config("spark.eventLog.dir", sys.argv[5]).config("spark.eventLog.compress", "false"))
    # The catalog's credentials come as spark-submit's --conf (PYSPARK_SUBMIT_ARGS, set by the test), as docs/sql.md
    # says to give them: Spark itself logs a builder's settings at DEBUG (SharedState's "initial session options").
    public = {k: v for k, v in options.items() if k not in KEYS_AS_CONF}
    spark = configure_spark_with_kinesis(builder, catalog="kinesis", **public).getOrCreate()
    table = "kinesis.`%s`" % stream
    spark.sql("INSERT INTO %s SELECT 'row-1' AS data, 'k' AS partitionKey" % table)
    shown = [spark.sql(statement % table).collect() for statement in (
        "DESCRIBE TABLE EXTENDED %s", "SHOW TBLPROPERTIES %s", "SHOW CREATE TABLE %s",
        "EXPLAIN EXTENDED SELECT * FROM %s")]
    for rows in shown:
        report("SHOWN", json.dumps([str(r) for r in rows]))
    first = spark.sql("SELECT * FROM %s" % table).count()
    # (Without the external id: Spark prints a session table's OPTIONS in its plans redacted by its default pattern
    # alone, whatever spark.redaction.regex says, so that one would show there; docs/sql.md, "Secrets".)
    spark.sql("CREATE TABLE orders USING kinesis OPTIONS (%s)" % ", ".join(
        "%s '%s'" % (k, v) for k, v in dict(options, streamName=stream).items() if k != "roleExternalId"))
    for statement in ("DESCRIBE TABLE EXTENDED orders", "SHOW TBLPROPERTIES orders", "SHOW CREATE TABLE orders",
                      "EXPLAIN EXTENDED SELECT * FROM orders"):
        report("SHOWN", json.dumps([str(r) for r in spark.sql(statement).collect()]))
    # read_kinesis with the secrets as its arguments: every plan EXPLAIN EXTENDED prints (parsed first) hides them.
    arguments = ", ".join("%s => '%s'" % (k, v) for k, v in dict(options, streamName=stream).items())
    report("SHOWN", json.dumps([str(r) for r in spark.sql(
        "EXPLAIN EXTENDED SELECT * FROM read_kinesis(%s)" % arguments).collect()]))
    spark.sql("INSERT INTO orders SELECT 'row-2' AS data, 'k' AS partitionKey")
    second = spark.sql("SELECT * FROM orders").count()
    report("BATCHES", first, second)
    spark.stop()
    sys.exit(0)
if mode == "schema-registry":
    from pyspark.sql import functions as F
    from spark_kinesis import from_glue_schema_registry, to_glue_schema_registry
    builder = (builder.config("spark.log.level", "DEBUG").config("spark.eventLog.enabled", "true")
               .config("spark.eventLog.dir", sys.argv[5]).config("spark.eventLog.compress", "false"))
    spark = configure_spark_with_kinesis(builder).getOrCreate()
    # The registry is moto's, the server that plays STS: its calls are signed with the role's credentials.
    registry = {k: v for k, v in options.items() if k not in ("endpointUrl", "cborEnabled")}
    registry.update(registryEndpointUrl=options["stsEndpointUrl"], registryName=sys.argv[6], schemaName=stream,
                    autoRegistration="true")
    schema = '{"type": "record", "name": "Row", "fields": [{"name": "n", "type": "long"}]}'

    def typed_batch(n):
        rows = spark.range(n, n + 1).select(
            to_glue_schema_registry(F.struct(F.col("id").alias("n")), schema, registry).alias("data"),
            F.lit("k").alias("partitionKey"))
        write_kinesis(rows, stream, **options)
        decoded = read_kinesis(spark, stream, **options).select(from_glue_schema_registry("data", registry).alias("r"))
        report("SHOWN", json.dumps(decoded._jdf.queryExecution().toString().splitlines() + [stream]))
        return decoded.where("r.n > 0").count()

    first = typed_batch(1)
    second = typed_batch(2)
    report("BATCHES", first, second)
    spark.stop()
    sys.exit(0)
spark = configure_spark_with_kinesis(builder).getOrCreate()

def batch(n):
    rows = spark.createDataFrame([(f"row-{n}", "k")], "data string, partitionKey string")
    write_kinesis(rows, stream, **options)
    return read_kinesis(spark, stream, **options).count()

first = batch(1)
if mode == "set-log-level-after-first-batch":
    spark.sparkContext.setLogLevel("DEBUG")
second = batch(2)
report("BATCHES", first, second)
spark.stop()
'''

# spark-submit and PySpark's gateway, which start PySpark's JVM, each set the root to the level of their own
# logger (WARN when the file does not set it), as Spark's shells do, so the file sets those loggers too.
LOG4J2 = """
rootLogger.level = debug
logger.submit.name = org.apache.spark.deploy.SparkSubmit
logger.submit.level = debug
logger.gateway.name = org.apache.spark.api.python.PythonGatewayServer
logger.gateway.level = debug
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss.SSS} %p %c: %m%n
"""


def _issued_credentials(endpoint: str, session: str):
    """The temporary secrets and tokens moto's STS issued to the connector (its role sessions named ``session``:
    one per client that assumed the role)."""
    data = json.load(urllib.request.urlopen(f"{endpoint}/moto-api/data.json", timeout=10))
    return [v for role in data.get("sts", {}).get("AssumedRole", []) if role.get("session_name") == session
            for k, v in role.items() if k in ("secret_access_key", "session_token") and v]


@pytest.mark.parametrize("mode", ["debug-before-start", "set-log-level-after-first-batch", "log4j2-file", "sql",
                                  "schema-registry"])
def test_no_secret_or_token_in_any_log_line(mode, kinesalite_server, moto_sts, stream_name, tmp_path):  # noqa: F811
    if mode in ("sql", "schema-registry"):
        # Spark redacts a value that matches its redaction pattern: the test's name ("secret", "token") would hide it.
        stream_name = f"log-{mode}-{os.getpid()}-{abs(hash(str(tmp_path))) % 10**8}"
    registry = f"logs-{os.getpid()}-{abs(hash(str(tmp_path))) % 10**6}"
    if mode == "schema-registry":
        import boto3

        boto3.client("glue", endpoint_url=moto_sts, region_name="us-east-1", aws_access_key_id="local-test-key",
                     aws_secret_access_key="local-test-secret").create_registry(RegistryName=registry)
    streams.create_stream(streams.client(kinesalite_server), stream_name, 1)
    session = f"log-{mode}-{os.getpid()}"
    options = dict(connector_options(kinesalite_server), awsAccessKeyId="AKIDLOGTEST1310", awsSecretKey=SECRET,
                   awsSessionToken=TOKEN, roleArn=ROLE_ARN, roleExternalId=EXTERNAL_ID, roleSessionName=session,
                   stsEndpointUrl=moto_sts)
    log4j2 = tmp_path / "log4j2.properties"
    log4j2.write_text(LOG4J2, encoding="utf-8")
    script = tmp_path / "driver.py"
    script.write_text(DRIVER, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(AWS_EC2_METADATA_DISABLED="true", SPARK_LOCAL_IP="127.0.0.1")
    if mode == "sql":
        # The keys, and the external id that Spark's own redaction pattern misses, as spark-submit's --conf:
        # configure_spark_with_kinesis adds the external id's name to spark.redaction.regex, so the environment
        # the event log records (what the Spark UI's Environment tab shows) hides all of them.
        env["PYSPARK_SUBMIT_ARGS"] = " ".join(f"--conf spark.sql.catalog.kinesis.{k}={v}" for k, v in options.items()
                                              if k in ("awsAccessKeyId", "awsSecretKey", "awsSessionToken",
                                                       "roleExternalId")) + " pyspark-shell"
    output = tmp_path / "output.log"
    events = tmp_path / "events"
    events.mkdir()
    with open(output, "w", encoding="utf-8") as out:
        process = subprocess.run([sys.executable, str(script), mode, json.dumps(options), stream_name, str(log4j2),
                                  str(events), registry],
                                 cwd=tmp_path, env=env, stdout=out, stderr=subprocess.STDOUT, timeout=RUN_TIMEOUT_S)
    lines = output.read_text(encoding="utf-8", errors="replace").splitlines()
    assert process.returncode == 0, "\n".join(lines[-40:])
    report = (tmp_path / "report.txt").read_text(encoding="utf-8").splitlines()
    assert "BATCHES 1 2" in report, "\n".join(lines[-40:])
    # DEBUG was on, for Spark and for the AWS SDK's own request logger, while the connector called AWS.
    assert sum(" DEBUG " in line for line in lines) > 100
    assert any("Sending Request" in line for line in lines), "the SDK logged no request at DEBUG"
    issued = _issued_credentials(moto_sts, session)
    assert len(issued) >= 2, "the connector did not assume the role through moto"
    secrets = [SECRET, TOKEN, EXTERNAL_ID] + issued
    # Spark's parser logs a statement's own text at DEBUG: the one statement that writes the keys into its text (a
    # session-catalog table's OPTIONS) is there as the user wrote it (docs/sql.md, "Secrets"), and nowhere else.
    # So is read_kinesis's: its arguments hold the keys.
    statements = ("SparkSqlParser: Parsing command: CREATE TABLE orders USING kinesis OPTIONS (",
                  "SparkSqlParser: Parsing command: EXPLAIN EXTENDED SELECT * FROM read_kinesis(")
    leaks = [line[:300] for line in lines + report
             if any(s in line for s in secrets) and not any(statement in line for statement in statements)]
    assert leaks == [], f"{len(leaks)} lines show a secret or token"
    if mode == "schema-registry":
        # The plans (the query execution, reported above) show the functions without their options.
        shown = [line for line in report if line.startswith("SHOWN")]
        assert len(shown) == 2 and all("from_glue_schema_registry(data" in line for line in shown), "\n".join(shown)
    if mode in ("sql", "schema-registry"):
        # What SQL showed (the statements' rows, reported above) named the stream, and so did the event log.
        shown = [line for line in report if line.startswith("SHOWN")]
        assert len(shown) == (9 if mode == "sql" else 2) and all(stream_name in line for line in shown), \
            "\n".join(shown)
        logged = [line for f in events.rglob("*") if f.is_file() for line in f.read_text(encoding="utf-8").splitlines()]
        assert any(stream_name in line for line in logged), "the event log has no plan of the stream's queries"
        if mode == "sql":
            # The settings were there, redacted: the environment (the Environment tab's) and read_kinesis's plan.
            assert any("spark.sql.catalog.kinesis.roleExternalId" in line and "*********(redacted)" in line
                       for line in logged), "the event log's environment has no redacted external id"
            assert any("read_kinesis" in line and "*********(redacted)" in line for line in shown), "\n".join(shown)
        event_leaks = [line[:300] for line in logged if any(s in line for s in secrets)]
        assert event_leaks == [], f"{len(event_leaks)} events (what the Spark UI shows) show a secret or token"
