"""The Python API checks keyword arguments before the JVM is touched and raises typed errors."""

from __future__ import annotations

import pytest

import spark_kinesis
from spark_kinesis import InitialPosition, KinesisOptions, kinesis_stream, read_kinesis, write_kinesis
from spark_kinesis.errors import KinesisOptionError, KinesisStreamNotFoundError, from_exception
from spark_kinesis.options import OPTIONS

from conftest import connector_options


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


def test_connector_errors_become_python_exceptions(spark, kinesalite_server):
    # Raised by the JVM when the read is defined, re-raised as the package's class.
    with pytest.raises(KinesisOptionError) as err:
        read_kinesis(spark, "bad name!", **connector_options(kinesalite_server))
    assert err.value.condition == "KINESIS_INVALID_STREAM_NAME"
    # Raised when the query runs: from_exception finds the condition.
    with pytest.raises(Exception) as err:
        read_kinesis(spark, "no-such-stream-anywhere", **connector_options(kinesalite_server)).collect()
    found = from_exception(err.value)
    assert isinstance(found, KinesisStreamNotFoundError)
    assert "no-such-stream-anywhere" in str(found)


def test_from_exception_finds_the_condition_of_a_failed_query(spark, kinesalite_server, tmp_path):
    df = kinesis_stream(spark, "missing-stream-for-query", initial_position="trim_horizon",
                        **connector_options(kinesalite_server))
    query = df.writeStream.format("noop").option("checkpointLocation", str(tmp_path)).start()
    with pytest.raises(Exception) as err:
        query.awaitTermination(60)
    assert isinstance(from_exception(err.value), KinesisStreamNotFoundError)


def test_version_check_passes_for_the_installed_pyspark():
    import pyspark

    spark_kinesis._jar.check_versions(pyspark.__version__)
    with pytest.raises(spark_kinesis.errors.KinesisVersionError) as err:
        spark_kinesis._jar.check_versions("3.5.1")
    assert "install pyspark==" in str(err.value)
