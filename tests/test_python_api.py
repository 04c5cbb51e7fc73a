"""The Python API checks keyword arguments before the JVM is touched and raises typed errors."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import typing
from pathlib import Path

import pytest

import spark_kinesis
from spark_kinesis import (InitialPosition, KinesisOptions, configure_spark_with_kinesis, errors, kinesis_stream,
                           read_kinesis, write_kinesis)
from spark_kinesis import options as generated
from spark_kinesis._validate import normalize
from spark_kinesis.errors import KinesisOptionError, KinesisSchemaError, KinesisStreamNotFoundError, from_exception
from spark_kinesis.options import FOREIGN_OPTIONS, OPTIONS

from conftest import connector_options
from harness import streams
from harness.waiting import QUERY_END_S
from harness.fault_fixtures import create_stream, fault_proxy, landed  # noqa: F401 (fault_proxy is a fixture)

ROOT = Path(__file__).resolve().parents[1]


class NoJvm:
    """A stand-in session: any use of it means validation let a bad argument through to Spark."""

    def __getattr__(self, name):
        raise AssertionError(f"the JVM was touched ({name}) before the arguments were checked")


def test_unknown_keyword_is_named_with_a_suggestion_without_the_jvm():
    with pytest.raises(KinesisOptionError) as err:
        kinesis_stream(NoJvm(), "orders", maxRecordsPerTriger=10)
    assert "Unknown option 'maxRecordsPerTriger'" in str(err.value)
    assert "Did you mean" in str(err.value) and "'maxRecordsPerTrigger'" in str(err.value)
    assert err.value.condition == "KINESIS_UNKNOWN_OPTION"


def test_bad_values_name_the_python_argument():
    with pytest.raises(KinesisOptionError) as err:
        kinesis_stream(NoJvm(), "orders", initial_position="beginning")
    assert "Option 'initial_position' has the value 'beginning'" in str(err.value)
    with pytest.raises(KinesisOptionError) as err:
        kinesis_stream(NoJvm(), "orders", maxRecordsPerFetch=20000)
    assert "a whole number from 1 to 10000" in str(err.value)
    with pytest.raises(KinesisOptionError) as err:
        kinesis_stream(NoJvm(), [], region="us-east-1")
    assert "Argument 'stream'" in str(err.value)


def test_sink_options_are_refused_on_reads():
    with pytest.raises(KinesisOptionError) as err:
        read_kinesis(NoJvm(), "orders", maxRetries=3)
    assert "applies to the Kinesis sink only" in str(err.value)


def test_secret_values_are_not_echoed():
    with pytest.raises(KinesisOptionError) as err:
        kinesis_stream(NoJvm(), "orders", awsSecretKey="   ")
    assert "(hidden)" in str(err.value)


def test_constants_cover_every_option_and_initial_positions_are_valid():
    names = {v for k, v in vars(KinesisOptions).items() if k.isupper()}
    assert names == set(OPTIONS)
    assert set(OPTIONS["initialPosition"].choices) == {
        InitialPosition.LATEST, InitialPosition.TRIM_HORIZON, InitialPosition.EARLIEST, InitialPosition.AT_TIMESTAMP}


def test_initial_position_is_typed_with_the_registry_choices():
    # The Literal is generated from the registry; the helpers' signatures use it.
    assert typing.get_args(spark_kinesis.InitialPositionValue) == OPTIONS["initialPosition"].choices
    for helper in (kinesis_stream, read_kinesis):
        assert typing.get_type_hints(helper)["initial_position"] == spark_kinesis.InitialPositionValue


def test_value_descriptions_and_stream_patterns_come_from_the_registry():
    # What a value must be is the connector's own wording (generated), plus the Python values it takes.
    with pytest.raises(KinesisOptionError) as err:
        kinesis_stream(NoJvm(), "orders", max_fetch_rate="fast")
    assert f"must be {OPTIONS['maxFetchRate'].describe}." in str(err.value)
    assert "a size in bytes from 1024 to 104857600" in str(err.value)
    with pytest.raises(KinesisOptionError) as err:
        kinesis_stream(NoJvm(), "orders", initial_timestamp="yesterday")
    assert f"must be {OPTIONS['initialTimestamp'].describe}, or a timezone-aware datetime.datetime." in str(err.value)
    assert re.fullmatch(generated.STREAM_ARN_PATTERN, "arn:aws-cn:kinesis:cn-north-1:123456789012:stream/a.b-c_d")
    with _validation_passed():
        read_kinesis(NoJvm(), "arn:aws-us-gov:kinesis:us-gov-west-1:123456789012:stream/orders")
    with pytest.raises(KinesisOptionError, match="Stream 'arn:aws:kinesis:eu-west-1:123:stream/orders'"):
        read_kinesis(NoJvm(), "arn:aws:kinesis:eu-west-1:123:stream/orders")


@pytest.mark.compat
def test_connector_errors_become_python_exceptions(spark, kinesalite_server, stream_name):
    # Raised by the JVM when the write runs, re-raised as the package's class (chained to PySpark's).
    streams.create_stream(streams.client(kinesalite_server), stream_name, 1)
    df = spark.createDataFrame([("a", "k", 1)], "data string, partitionKey string, extra int")
    with pytest.raises(KinesisSchemaError) as err:
        write_kinesis(df, stream_name, **connector_options(kinesalite_server))
    assert err.value.condition == "KINESIS_INVALID_SINK_SCHEMA"
    assert "Unexpected column(s) extra" in str(err.value)
    assert err.value.__cause__ is not None
    # Raised when the query runs: from_exception finds the condition.
    with pytest.raises(Exception) as err:
        read_kinesis(spark, "no-such-stream-anywhere", **connector_options(kinesalite_server)).collect()
    found = from_exception(err.value)
    assert isinstance(found, KinesisStreamNotFoundError)
    assert "no-such-stream-anywhere" in str(found)


def test_from_exception_finds_the_condition_of_a_failed_query(spark, kinesalite_server, stream_name, tmp_path,
                                                               monkeypatch):
    # The stream exists when the query is defined and is gone when it runs.
    kinesis = streams.client(kinesalite_server)
    streams.create_stream(kinesis, stream_name, 1)
    df = kinesis_stream(spark, stream_name, initial_position="trim_horizon", **connector_options(kinesalite_server))
    streams.delete_stream(kinesis, stream_name)
    query = df.writeStream.format("noop").option("checkpointLocation", str(tmp_path)).start()
    with pytest.raises(Exception) as err:
        query.awaitTermination(QUERY_END_S)
    assert isinstance(from_exception(err.value), KinesisStreamNotFoundError)
    # Found by the condition of the JVM error inside the StreamingQueryException, not by reading its message.
    monkeypatch.setattr(errors, "_CONDITION", re.compile(r"(?!)"))
    assert errors.condition_of(err.value) == "KINESIS_STREAM_NOT_FOUND"
    assert isinstance(from_exception(err.value), KinesisStreamNotFoundError)


def _spark_condition(jvm_or_captured) -> str:
    """The condition as PySpark's line names the method: getCondition() on PySpark 4, getErrorClass() on 3.5."""
    import pyspark

    return (jvm_or_captured.getCondition() if pyspark.__version__.startswith("4")
            else jvm_or_captured.getErrorClass())


@pytest.mark.compat
def test_a_missing_stream_is_caught_by_its_condition(spark, kinesis_mock_server, stream_name, monkeypatch):
    """Issue 28.5, classic PySpark: the connector's errors are Spark error conditions, with an SQLSTATE and message
    parameters, and the package picks its class by the condition Spark reports, not by reading the message."""
    opts = connector_options(kinesis_mock_server)
    missing = f"{stream_name}-missing"
    with pytest.raises(Exception) as err:
        spark.read.format("kinesis").options(**opts, streamName=missing).load()
    # A JVM exception PySpark has no class for reaches Python as a Py4JJavaError holding the JVM exception.
    jvm = err.value.java_exception
    assert _spark_condition(jvm) == "KINESIS_STREAM_NOT_FOUND"
    assert jvm.getSqlState() == "42704"
    assert dict(jvm.getMessageParameters()) == {"stream": missing}
    # An option error is an IllegalArgumentException, which PySpark captures; its own API reports the condition.
    with pytest.raises(Exception) as bad:
        spark.read.format("kinesis").options(**opts, streamName=missing, maxRecordsPerFetch="0").load()
    assert _spark_condition(bad.value) == "KINESIS_INVALID_OPTION_VALUE" and bad.value.getSqlState() == "22023"
    # With the message's bracketed name out of reach, the classes are the same: they come from the conditions.
    monkeypatch.setattr(errors, "_CONDITION", re.compile(r"(?!)"))
    found = from_exception(err.value)
    assert isinstance(found, KinesisStreamNotFoundError) and found.condition == "KINESIS_STREAM_NOT_FOUND"
    assert isinstance(from_exception(bad.value), KinesisOptionError)
    with pytest.raises(KinesisStreamNotFoundError):
        read_kinesis(spark, missing, **opts)


@pytest.mark.compat
def test_version_check_passes_for_the_installed_pyspark():
    import pyspark

    spark_kinesis._jar.check_versions(pyspark.__version__)
    with pytest.raises(spark_kinesis.errors.KinesisVersionError) as err:
        spark_kinesis._jar.check_versions("3.4.1")
    assert "no jar for Spark 3.4.1" in str(err.value) and "install one of those" in str(err.value)
    assert "pip install 'pyspark>=3.5,<3.6'" in str(err.value)


def _validation_passed():
    """What kinesis_stream raises with NoJvm() once every argument was accepted: the JVM is about to be called."""
    return pytest.raises(AssertionError, match="the JVM was touched")


def test_options_in_snake_case_and_python_values_are_converted():
    options = normalize([("stream", "orders"), ("max_records_per_trigger", 500), ("FAILONDATALOSS", False),
                         ("min_fetch_period", dt.timedelta(seconds=1.5)), ("maxBytesPerTrigger", "5m"),
                         ("initial_timestamp", dt.datetime(2026, 1, 31, 12, 0, tzinfo=dt.timezone.utc))],
                        "source", aliases={"stream": "streamName"})
    assert options == {"streamName": "orders", "maxRecordsPerTrigger": "500", "failOnDataLoss": "false",
                       "minFetchPeriod": "1500ms", "maxBytesPerTrigger": "5m",
                       "initialTimestamp": "2026-01-31T12:00:00+00:00"}
    with _validation_passed():
        kinesis_stream(NoJvm(), "orders", max_records_per_trigger=10, fail_on_data_loss=True)


def test_python_values_of_the_wrong_kind_name_the_argument():
    with pytest.raises(KinesisOptionError) as err:
        kinesis_stream(NoJvm(), "orders", initial_position="at_timestamp", initial_timestamp=dt.datetime(2026, 1, 31))
    assert "Option 'initial_timestamp' has the naive datetime '2026-01-31T00:00:00'; give it a timezone" in str(err.value)
    with pytest.raises(KinesisOptionError) as err:
        kinesis_stream(NoJvm(), "orders", min_fetch_period="fast")
    assert ("Option 'min_fetch_period' has the value 'fast', but it must be a duration from 50ms to 240s such as "
            "200ms, 5s or 2m (or a datetime.timedelta)") in str(err.value)
    with pytest.raises(KinesisOptionError) as err:
        kinesis_stream(NoJvm(), "orders", fetch_buffer_size=dt.timedelta(seconds=1))
    assert "Option 'fetch_buffer_size' takes a size in bytes" in str(err.value)


def test_an_option_given_twice_is_refused_naming_both_spellings():
    with pytest.raises(KinesisOptionError) as err:
        kinesis_stream(NoJvm(), "orders", streamName="refunds")
    assert "'stream' and 'streamName' both set the option 'streamName'" in str(err.value)
    assert err.value.condition == "KINESIS_CONFLICTING_OPTIONS"
    with pytest.raises(KinesisOptionError) as err:
        kinesis_stream(NoJvm(), "orders", region="eu-west-1", Region="us-east-1")
    assert "'region' and 'Region' both set the option 'region'" in str(err.value)
    with pytest.raises(KinesisOptionError) as err:
        read_kinesis(NoJvm(), "orders", initial_position="earliest", initialPosition="at_timestamp")
    assert "'initial_position' and 'initialPosition'" in str(err.value)
    # The option's own name is fine when the keyword argument was left at its default.
    with _validation_passed():
        kinesis_stream(NoJvm(), "orders", initialPosition="trim_horizon")


def test_stream_names_are_checked_before_the_jvm():
    with pytest.raises(KinesisOptionError) as err:
        kinesis_stream(NoJvm(), "orders, bad name!")
    assert err.value.condition == "KINESIS_INVALID_STREAM_NAME"
    assert "Stream 'bad name!' in argument 'stream'" in str(err.value)
    with pytest.raises(KinesisOptionError) as err:
        write_kinesis(NoJvm(), "orders,refunds")
    assert "Argument 'stream' names 2 streams, but the sink writes to one stream" in str(err.value)
    with _validation_passed():
        read_kinesis(NoJvm(), ["orders", "arn:aws:kinesis:eu-west-1:123456789012:stream/refunds"])


def test_a_write_without_stream_needs_a_stream_column(spark):
    df = spark.createDataFrame([("k", "d")], "partitionKey string, data string")
    with pytest.raises(KinesisOptionError) as err:
        write_kinesis(df, None, region="us-east-1")
    assert "Argument 'stream' is None and the DataFrame has no 'stream' column" in str(err.value)


@pytest.mark.compat
def test_python_values_reach_the_connector(spark, kinesalite_server, stream_name):
    kinesis = streams.client(kinesalite_server)
    streams.create_stream(kinesis, stream_name, 1)
    streams.put_records(kinesis, stream_name, [(f"r{i}", f"k{i}") for i in range(5)])
    df = read_kinesis(spark, stream_name, initial_position=InitialPosition.AT_TIMESTAMP,
                      initial_timestamp=dt.datetime(2001, 1, 1, tzinfo=dt.timezone.utc),
                      max_records_per_fetch=2, min_fetch_period=dt.timedelta(milliseconds=250),
                      fail_on_data_loss=True, **connector_options(kinesalite_server))
    assert sorted(r.data for r in df.selectExpr("CAST(data AS STRING) AS data").collect()) == [
        f"r{i}" for i in range(5)]


def test_every_connector_condition_has_a_python_class():
    # The connector's conditions, as the jar has them (ErrorConditionsSuite checks that the JVM uses every one).
    resource = ROOT / "jvm" / "src" / "main" / "resources" / "error" / "kinesis-error-conditions.json"
    conditions = set(json.loads(resource.read_text(encoding="utf-8")))
    assert "KINESIS_STREAM_NOT_FOUND" in conditions
    unmapped = sorted(c for c in conditions if c not in errors._BY_CONDITION)
    assert unmapped == [], f"add a class in python/spark_kinesis/errors.py for {unmapped}"
    for condition, cls in errors._BY_CONDITION.items():
        found = from_exception(RuntimeError(f"java.lang.RuntimeException: [{condition}] what happened\n\tat x"))
        assert type(found) is cls and found.condition == condition
        assert cls.__name__ in errors.__all__


def test_a_session_without_the_jar_gets_a_clear_error():
    # The message of Spark 4.3 when no data source answers to format("kinesis").
    spark_error = RuntimeError(
        "An error occurred while calling o30.load.\n: org.apache.spark.SparkClassNotFoundException: "
        "[DATA_SOURCE_NOT_FOUND] Failed to find the data source: kinesis. Make sure the provider name is correct "
        "and the package is properly registered and compatible with your Spark version. SQLSTATE: 42K02")
    found = from_exception(spark_error)
    assert isinstance(found, errors.KinesisConnectorNotFoundError)
    assert "configure_spark_with_kinesis" in str(found) and "--jars" in str(found)
    assert from_exception(RuntimeError("[DATA_SOURCE_NOT_FOUND] Failed to find the data source: kafka.")) is None
    # The helpers name the provider's class (spark_kinesis.io.FORMAT); Spark names it back.
    by_class = RuntimeError("[DATA_SOURCE_NOT_FOUND] Failed to find the data source: "
                            "io.sparkkinesis.KinesisSourceProvider. Make sure the provider name is correct.")
    assert isinstance(from_exception(by_class), errors.KinesisConnectorNotFoundError)


def test_configure_adds_the_jar_unless_the_server_is_remote():
    from pyspark.sql import SparkSession

    jar = spark_kinesis.jar_path()
    classic = configure_spark_with_kinesis(SparkSession.builder.config("spark.jars", "/opt/other.jar"))
    assert classic._options["spark.jars"] == f"/opt/other.jar,{jar}"
    # PySpark's local Spark Connect server is started by this process, with the builder's spark.jars.
    local = configure_spark_with_kinesis(SparkSession.builder.remote("local[2]"))
    assert local._options["spark.jars"] == jar
    api_mode = configure_spark_with_kinesis(SparkSession.builder.config("spark.api.mode", "connect"))
    assert api_mode._options["spark.jars"] == jar
    # A remote server cannot gain a jar from its client: the builder is returned unchanged.
    remote = configure_spark_with_kinesis(SparkSession.builder.remote("sc://localhost:15002"))
    assert "spark.jars" not in remote._options


def test_configure_hides_every_secret_option_from_spark_keeping_a_redaction_pattern_of_the_builder():
    from pyspark.sql import SparkSession

    secrets = [name for name, info in OPTIONS.items() if info.secret]
    assert "roleExternalId" in secrets and "awsSecretKey" in secrets
    import pyspark

    alone = configure_spark_with_kinesis(SparkSession.builder)
    # The jar brings the SQL extensions itself (its service file): the builder sets none, but on PySpark 3.5, whose
    # classic sessions load no extensions from jars.
    if pyspark.__version__.startswith("3."):
        assert alone._options["spark.sql.extensions"] == "io.sparkkinesis.KinesisSparkExtensions"
    else:
        assert "spark.sql.extensions" not in alone._options
    pattern = alone._options["spark.redaction.regex"]
    assert pattern.startswith("(?i)secret|password|token|access[.]?key")
    for name in secrets:
        # As Spark matches it: anywhere in a setting's key, whatever the case of the option's name.
        assert re.search(pattern, f"spark.sql.catalog.kinesis.{name.lower()}"), name
    kept = configure_spark_with_kinesis(SparkSession.builder.config("spark.redaction.regex", "mine"))
    assert kept._options["spark.redaction.regex"].startswith("mine|")
    assert all(re.search(kept._options["spark.redaction.regex"], name.upper()) for name in secrets)
    assert not re.search(kept._options["spark.redaction.regex"], "spark.sql.catalog.kinesis.region")


def test_configure_registers_a_kinesis_catalog_with_its_options_checked():
    from pyspark.sql import SparkSession

    built = configure_spark_with_kinesis(SparkSession.builder, catalog="streams", region="eu-west-1",
                                         endpoint_url="http://127.0.0.1:4567", allow_alter_stream=True,
                                         initial_position="trim_horizon")
    catalog = {k: v for k, v in built._options.items() if k.startswith("spark.sql.catalog.")}
    assert catalog == {
        "spark.sql.catalog.streams": "io.sparkkinesis.KinesisCatalog",
        "spark.sql.catalog.streams.region": "eu-west-1",
        "spark.sql.catalog.streams.endpointUrl": "http://127.0.0.1:4567",
        "spark.sql.catalog.streams.allowAlterStream": "true",
        "spark.sql.catalog.streams.initialPosition": "trim_horizon",
    }
    # A remote server's session still takes the catalog, a setting of the session, not of the server's start.
    remote = configure_spark_with_kinesis(SparkSession.builder.remote("sc://localhost:15002"), catalog="kinesis",
                                          region="eu-west-1")
    assert remote._options["spark.sql.catalog.kinesis.region"] == "eu-west-1" and "spark.jars" not in remote._options
    with pytest.raises(errors.KinesisOptionError, match="allowDropStrem|Did you mean"):
        configure_spark_with_kinesis(SparkSession.builder, catalog="kinesis", allowDropStrem=True)
    with pytest.raises(errors.KinesisOptionError, match="catalog's options: give the catalog's name"):
        configure_spark_with_kinesis(SparkSession.builder, region="eu-west-1")
    with pytest.raises(errors.KinesisOptionError, match="'streamName' is not a catalog option"):
        configure_spark_with_kinesis(SparkSession.builder, catalog="kinesis", stream_name="orders")
    with pytest.raises(errors.KinesisOptionError, match="plain SQL name"):
        configure_spark_with_kinesis(SparkSession.builder, catalog="my catalog")
    with pytest.raises(errors.KinesisOptionError, match="applies to the Kinesis catalog only"):
        kinesis_stream(None, "orders", allow_drop_stream=True)  # type: ignore[arg-type]

DOCTEST_SCRIPT = """
import doctest, json, sys
import spark_kinesis, spark_kinesis.io, spark_kinesis.session, spark_kinesis._jar, spark_kinesis.errors
from pyspark.sql import SparkSession
from spark_kinesis import configure_spark_with_kinesis

spark = configure_spark_with_kinesis(
    SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
    .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")).getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
modules = [spark_kinesis, spark_kinesis.io, spark_kinesis.session, spark_kinesis._jar, spark_kinesis.errors]
finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
examples = 0
for module in modules:
    for test in finder.find(module, globs={"spark": spark}):
        runner.run(test)
        examples += len(test.examples)
results = runner.summarize(verbose=False)
print(json.dumps({"failed": results.failed, "examples": examples}))
"""


def test_docstring_examples_run(kinesis_mock_server, tmp_path):
    # The examples define queries on AWS streams ("orders" in eu-west-1), which the helpers check exist: they run
    # in a JVM of their own whose SDK is pointed at kinesis-mock (AWS_ENDPOINT_URL_KINESIS, as a user trying them
    # locally would), holding those streams. Actions that would need records are marked +SKIP.
    import boto3
    import subprocess
    import sys

    kinesis = boto3.client("kinesis", endpoint_url=kinesis_mock_server.endpoint, region_name="eu-west-1",
                           aws_access_key_id="test", aws_secret_access_key="test")
    for name in ("orders", "refunds", "orders-copy"):
        if name not in kinesis.list_streams(Limit=100)["StreamNames"]:
            streams.create_stream(kinesis, name, 1)
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(AWS_ENDPOINT_URL_KINESIS=kinesis_mock_server.endpoint, AWS_ACCESS_KEY_ID="test",
               AWS_SECRET_ACCESS_KEY="test", AWS_EC2_METADATA_DISABLED="true", SPARK_LOCAL_IP="127.0.0.1")
    process = subprocess.run([sys.executable, "-c", DOCTEST_SCRIPT], cwd=tmp_path, env=env, text=True,
                             capture_output=True, timeout=300)
    assert process.returncode == 0, process.stderr[-3000:]
    results = json.loads(process.stdout.strip().splitlines()[-1])
    assert results["failed"] == 0, process.stdout[-5000:]
    assert results["examples"] >= 15


@pytest.mark.compat
def test_a_misspelt_stream_fails_at_the_call(spark, kinesis_mock_server, stream_name):
    """Issue 13.5: the helpers, and load() itself, check that the named streams exist (by name or ARN)."""
    kinesis = streams.client(kinesis_mock_server)
    arn = streams.create_stream(kinesis, stream_name, 1)["StreamARN"]
    missing = f"{stream_name}-misspelt"
    missing_arn = arn.replace(stream_name, missing)
    opts = connector_options(kinesis_mock_server)
    rows = spark.createDataFrame([("k", "d")], "partitionKey string, data string")
    rate = spark.readStream.format("rate").load().selectExpr("CAST(value AS STRING) AS data")
    calls = {
        "kinesis_stream": (lambda: kinesis_stream(spark, [stream_name, missing], **opts), missing),
        "read_kinesis": (lambda: read_kinesis(spark, missing, **opts), missing),
        "read_kinesis by ARN": (lambda: read_kinesis(spark, [arn, missing_arn], **opts), missing_arn),
        "write_kinesis, batch": (lambda: write_kinesis(rows, missing, **opts), missing),
        "write_kinesis, streaming": (lambda: write_kinesis(rate, missing, **opts), missing),
    }
    for what, (call, name) in calls.items():
        with pytest.raises(KinesisStreamNotFoundError) as err:
            call()
        assert f"[KINESIS_STREAM_NOT_FOUND] Stream '{name}' does not exist" in str(err.value), what
    # The JVM API fails at load() as well, before any action.
    with pytest.raises(Exception) as err:
        spark.readStream.format("kinesis").options(**opts, streamName=missing).load()
    assert isinstance(from_exception(err.value), KinesisStreamNotFoundError)
    # Streams that exist pass, by name and by ARN; nothing was written by the failed calls.
    assert kinesis_stream(spark, stream_name, **opts).isStreaming
    assert read_kinesis(spark, arn, **opts).count() == 0
    assert write_kinesis(rate, arn, **opts) is not None


def test_write_kinesis_skips_the_check_when_listing_shards_is_denied(spark, fault_proxy, stream_name):
    """A writer's policy need not allow ListShards: the check is skipped and the write goes on."""
    create_stream(fault_proxy, stream_name, 1)
    fault_proxy.inject_error("ListShards", "AccessDeniedException", message=(
        "User: arn:aws:iam::123456789012:user/writer is not authorized to perform: kinesis:ListShards"))
    rows = spark.createDataFrame([("k", "d")], "partitionKey string, data string")
    write_kinesis(rows, stream_name, **connector_options(fault_proxy))
    assert fault_proxy.calls("ListShards") == 1, "the check asked once and was denied"
    assert [r["data"] for r in landed(fault_proxy, stream_name)] == [b"d"]


def test_enhanced_fan_out_arguments_in_snake_case():
    options = normalize([("consumer_mode", "efo"), ("consumer_name", "orders-app"),
                         ("require_consumer_deregistration", True)], "source")
    assert options == {"consumerMode": "efo", "consumerName": "orders-app", "requireConsumerDeregistration": "true"}
    options = normalize([("registered_consumer_id", "arn:aws:kinesis:eu-west-1:123456789012:stream/o/consumer/c:1"),
                         ("registered_consumer_id_type", "arn")], "source")
    assert options["registeredConsumerIdType"] == "arn"
    with pytest.raises(KinesisOptionError) as err:
        kinesis_stream(NoJvm(), "orders", consumer_mode="fanout")
    assert "Option 'consumer_mode' has the value 'fanout'" in str(err.value)
    with pytest.raises(KinesisOptionError) as err:
        read_kinesis(NoJvm(), "orders", registered_consumer_id_type="id")
    assert "Option 'registered_consumer_id_type' has the value 'id'" in str(err.value)


def test_kinesis_stream_reads_through_enhanced_fan_out(spark, kinesis_mock_server, stream_name, tmp_path):
    """kinesis_stream with EFO arguments in snake case: the query registers the consumer it was given, reads every
    record through it, reports the mode and the consumer in its progress, and deregisters the consumer at stop."""
    kinesis = streams.client(kinesis_mock_server)
    streams.create_stream(kinesis, stream_name, 2)
    streams.put_records(kinesis, stream_name, [(f"r{i}", f"k{i}") for i in range(200)])
    arn = kinesis.describe_stream_summary(StreamName=stream_name)["StreamDescriptionSummary"]["StreamARN"]
    consumer = f"{stream_name}-app"
    df = kinesis_stream(spark, stream_name, initial_position="trim_horizon", consumer_mode="efo",
                        consumer_name=consumer, require_consumer_deregistration=True,
                        **connector_options(kinesis_mock_server))
    query = (df.selectExpr("CAST(data AS STRING) AS data").writeStream.format("memory").queryName(
        stream_name.replace("-", "_")).option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(availableNow=True).start())
    try:
        assert query.awaitTermination(QUERY_END_S), "the AvailableNow query did not end"
        rows = spark.sql(f"SELECT data FROM {stream_name.replace('-', '_')}").collect()
        assert sorted(r.data for r in rows) == sorted(f"r{i}" for i in range(200))
        metrics = [p["sources"][0]["metrics"] for p in query.recentProgress if p["numInputRows"] > 0]
        assert metrics and all(m["consumerMode"] == "efo" and m["consumerName"] == consumer for m in metrics), metrics
    finally:
        query.stop()
    left = [c for c in kinesis.list_stream_consumers(StreamARN=arn)["Consumers"]
            if c["ConsumerName"] == consumer and c["ConsumerStatus"] != "DELETING"]
    assert left == [], f"the consumer is still registered after the stop: {left}"


def test_other_connectors_names_pass_to_the_connector_as_written():
    # Databricks' and qubole's names (docs/migrating.md) are the connector's to read: passed on unchanged.
    options = normalize([("awsAccessKey", "AKIA"), ("shard_fetch_interval", "2s"), ("maxFetchDuration", "10s"),
                         ("startingposition", True)], "source")
    assert options == {"awsAccessKey": "AKIA", "shardFetchInterval": "2s", "maxFetchDuration": "10s",
                       "startingPosition": "true"}
    assert FOREIGN_OPTIONS["awsAccessKey"] == "awsAccessKeyId" and FOREIGN_OPTIONS["maxFetchDuration"] is None
    assert not any(name.startswith("kinesis.stsRoleArn") for name in FOREIGN_OPTIONS), "awslabs names are not here"
