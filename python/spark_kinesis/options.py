# Generated from io.sparkkinesis.config.KinesisOptions by `make docs`; do not edit by hand.
"""Every option of the connector: a constant per name, and what Python checks before the JVM is touched.

Example::

    from spark_kinesis import KinesisOptions, kinesis_stream

    df = kinesis_stream(spark, "orders", **{KinesisOptions.MAX_RECORDS_PER_TRIGGER: 10000})
"""

from __future__ import annotations

from typing import Dict

from spark_kinesis._option_info import OptionInfo

__all__ = ["KinesisOptions", "OPTIONS"]


class KinesisOptions:
    """Option names, as the connector spells them (option names are case-insensitive)."""

    STREAM_NAME = "streamName"
    REGION = "region"
    ENDPOINT_URL = "endpointUrl"
    CBOR_ENABLED = "cborEnabled"
    AWS_ACCESS_KEY_ID = "awsAccessKeyId"
    AWS_SECRET_KEY = "awsSecretKey"
    AWS_SESSION_TOKEN = "awsSessionToken"
    AWS_PROFILE = "awsProfile"
    ROLE_ARN = "roleArn"
    ROLE_EXTERNAL_ID = "roleExternalId"
    ROLE_SESSION_NAME = "roleSessionName"
    STS_ENDPOINT_URL = "stsEndpointUrl"
    INITIAL_POSITION = "initialPosition"
    INITIAL_TIMESTAMP = "initialTimestamp"
    INITIAL_SHARD_POSITIONS = "initialShardPositions"
    MAX_RECORDS_PER_FETCH = "maxRecordsPerFetch"
    MIN_FETCH_PERIOD = "minFetchPeriod"
    SHARDS_PER_TASK = "shardsPerTask"
    IDLE_FETCH_PERIOD = "idleFetchPeriod"
    MAX_FETCH_RATE = "maxFetchRate"
    FETCH_BUFFER_SIZE = "fetchBufferSize"
    MAX_RECORDS_PER_TRIGGER = "maxRecordsPerTrigger"
    MAX_BYTES_PER_TRIGGER = "maxBytesPerTrigger"
    FAIL_ON_DATA_LOSS = "failOnDataLoss"
    SHARD_DISCOVERY_INTERVAL = "shardDiscoveryInterval"
    MAX_RECORDS_PER_REQUEST = "maxRecordsPerRequest"
    MAX_REQUEST_SIZE = "maxRequestSize"
    MAX_RECORD_SIZE = "maxRecordSize"
    MAX_RETRIES = "maxRetries"
    MAX_IN_FLIGHT_REQUESTS = "maxInFlightRequests"
    MAX_RETRY_DURATION = "maxRetryDuration"
    ORDERING = "ordering"
    PARTITION_KEY_COLUMN = "partitionKeyColumn"
    OVERSIZE_RECORD_ACTION = "oversizeRecordAction"
    AGGREGATION = "aggregation"
    AGGREGATION_MAX_SIZE = "aggregationMaxSize"


OPTIONS: Dict[str, OptionInfo] = {
    "streamName": OptionInfo("streamName", "string", "both", None, (), None, None, False),
    "region": OptionInfo("region", "string", "both", None, (), None, None, False),
    "endpointUrl": OptionInfo("endpointUrl", "string", "both", None, (), None, None, False),
    "cborEnabled": OptionInfo("cborEnabled", "boolean", "both", "true", (), None, None, False),
    "awsAccessKeyId": OptionInfo("awsAccessKeyId", "string", "both", None, (), None, None, True),
    "awsSecretKey": OptionInfo("awsSecretKey", "string", "both", None, (), None, None, True),
    "awsSessionToken": OptionInfo("awsSessionToken", "string", "both", None, (), None, None, True),
    "awsProfile": OptionInfo("awsProfile", "string", "both", None, (), None, None, False),
    "roleArn": OptionInfo("roleArn", "string", "both", None, (), None, None, False),
    "roleExternalId": OptionInfo("roleExternalId", "string", "both", None, (), None, None, False),
    "roleSessionName": OptionInfo("roleSessionName", "string", "both", "spark-kinesis", (), None, None, False),
    "stsEndpointUrl": OptionInfo("stsEndpointUrl", "string", "both", None, (), None, None, False),
    "initialPosition": OptionInfo("initialPosition", "enum", "source", None, ("latest", "trim_horizon", "earliest", "at_timestamp"), None, None, False),
    "initialTimestamp": OptionInfo("initialTimestamp", "timestamp", "source", None, (), None, None, False),
    "initialShardPositions": OptionInfo("initialShardPositions", "string", "source", None, (), None, None, False),
    "maxRecordsPerFetch": OptionInfo("maxRecordsPerFetch", "int", "source", "10000", (), 1, 10000, False),
    "minFetchPeriod": OptionInfo("minFetchPeriod", "duration", "source", "200ms", (), None, None, False),
    "shardsPerTask": OptionInfo("shardsPerTask", "int", "source", "1", (), 1, 10000, False),
    "idleFetchPeriod": OptionInfo("idleFetchPeriod", "duration", "source", "1s", (), None, None, False),
    "maxFetchRate": OptionInfo("maxFetchRate", "bytes", "source", "2097152", (), None, None, False),
    "fetchBufferSize": OptionInfo("fetchBufferSize", "bytes", "source", "268435456", (), None, None, False),
    "maxRecordsPerTrigger": OptionInfo("maxRecordsPerTrigger", "long", "source", None, (), 1, 9223372036854775807, False),
    "maxBytesPerTrigger": OptionInfo("maxBytesPerTrigger", "bytes", "source", None, (), None, None, False),
    "failOnDataLoss": OptionInfo("failOnDataLoss", "boolean", "source", "true", (), None, None, False),
    "shardDiscoveryInterval": OptionInfo("shardDiscoveryInterval", "duration", "source", "10s", (), None, None, False),
    "maxRecordsPerRequest": OptionInfo("maxRecordsPerRequest", "int", "sink", "500", (), 1, 500, False),
    "maxRequestSize": OptionInfo("maxRequestSize", "bytes", "sink", "5242880", (), None, None, False),
    "maxRecordSize": OptionInfo("maxRecordSize", "bytes", "sink", "1048576", (), None, None, False),
    "maxRetries": OptionInfo("maxRetries", "int", "sink", "10", (), 0, 1000, False),
    "maxInFlightRequests": OptionInfo("maxInFlightRequests", "int", "sink", "4", (), 1, 64, False),
    "maxRetryDuration": OptionInfo("maxRetryDuration", "duration", "sink", "120s", (), None, None, False),
    "ordering": OptionInfo("ordering", "enum", "sink", "unordered", ("unordered", "perkey"), None, None, False),
    "partitionKeyColumn": OptionInfo("partitionKeyColumn", "string", "sink", None, (), None, None, False),
    "oversizeRecordAction": OptionInfo("oversizeRecordAction", "enum", "sink", "fail", ("fail", "drop"), None, None, False),
    "aggregation": OptionInfo("aggregation", "enum", "sink", "none", ("none", "kpl"), None, None, False),
    "aggregationMaxSize": OptionInfo("aggregationMaxSize", "bytes", "sink", "51200", (), None, None, False),
}
