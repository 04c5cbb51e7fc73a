"""Bad options and schemas fail early with messages that name the option and what to do."""

from __future__ import annotations

import pytest
from pyspark.errors import IllegalArgumentException

from conftest import connector_options
from harness import streams


def _reader(spark, **options):
    return spark.read.format("kinesis").options(**options)


def test_unknown_option_is_named_with_a_suggestion(spark, kinesalite_server):
    opts = connector_options(kinesalite_server)
    with pytest.raises(IllegalArgumentException) as err:
        _reader(spark, streamName="s", initialPositon="trim_horizon", **opts).load()
    message = str(err.value)
    assert "[KINESIS_UNKNOWN_OPTION]" in message
    assert "'initialPositon'" in message
    assert "Did you mean 'initialPosition'?" in message


def test_missing_stream_name_fails_when_the_read_is_defined(spark):
    with pytest.raises(IllegalArgumentException) as err:
        _reader(spark, region="us-east-1").load()
    assert "[KINESIS_MISSING_OPTION] Option 'streamName' is required" in str(err.value)


def test_malformed_value_names_the_option_and_valid_values(spark, kinesalite_server):
    opts = connector_options(kinesalite_server)
    with pytest.raises(IllegalArgumentException) as err:
        _reader(spark, streamName="s", initialPosition="beginning", **opts).load().collect()
    message = str(err.value)
    assert "Option 'initialPosition' has the value 'beginning'" in message
    assert "one of latest, trim_horizon, earliest, at_timestamp" in message


def test_secret_values_are_not_echoed(spark, kinesalite_server):
    opts = dict(connector_options(kinesalite_server), awsSecretKey="s3cr3t-value-xyz", shardsPerTask="0")
    with pytest.raises(IllegalArgumentException) as err:
        _reader(spark, streamName="s", **opts).load().collect()
    assert "shardsPerTask" in str(err.value)
    assert "s3cr3t-value-xyz" not in str(err.value)


def test_latest_is_rejected_for_a_batch_read(spark, kinesalite_server, stream_name):
    # Refused when the batch scan is built; load() before it checks that the stream exists.
    streams.create_stream(streams.client(kinesalite_server), stream_name, 1)
    with pytest.raises(IllegalArgumentException) as err:
        _reader(spark, streamName=stream_name, initialPosition="latest",
                **connector_options(kinesalite_server)).load().collect()
    assert "trim_horizon, earliest or at_timestamp for a batch read" in str(err.value)


def test_sink_rejects_unexpected_columns(spark, kinesalite_server):
    df = spark.createDataFrame([("a", "k", 1)], "data string, partitionKey string, extra int")
    with pytest.raises(IllegalArgumentException) as err:
        df.write.format("kinesis").options(streamName="s", **connector_options(kinesalite_server)).mode("append").save()
    message = str(err.value)
    assert "[KINESIS_INVALID_SINK_SCHEMA] Unexpected column(s) extra." in message
    assert ("data (binary or string, required), partitionKey (string, optional), explicitHashKey (string, optional), "
            "stream (string, optional)") in message


def test_source_option_on_the_sink_is_rejected(spark, kinesalite_server):
    df = spark.createDataFrame([("a", "k")], "data string, partitionKey string")
    with pytest.raises(IllegalArgumentException) as err:
        (df.write.format("kinesis").options(streamName="s", initialPosition="latest",
                                            **connector_options(kinesalite_server)).mode("append").save())
    assert "Option 'initialPosition' applies to the Kinesis source only, not to the sink" in str(err.value)
