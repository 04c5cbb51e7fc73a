# Generated from io.sparkkinesis.config.KinesisOptions by `make docs`; do not edit by hand.
"""Every option of the connector: a constant per name, and what Python checks before the JVM is touched.

Example::

    from spark_kinesis import KinesisOptions, kinesis_stream

    df = kinesis_stream(spark, "orders", **{KinesisOptions.MAX_RECORDS_PER_TRIGGER: 10000})
"""

from __future__ import annotations

from typing import Dict, Final, Literal, Optional, TypeAlias

from spark_kinesis._option_info import OptionInfo

__all__ = ["KinesisOptions", "OPTIONS", "FOREIGN_OPTIONS", "InitialPositionValue"]


InitialPositionValue: TypeAlias = Literal["latest", "trim_horizon", "earliest", "at_timestamp"]
"""The values of the ``initialPosition`` option (matched case-insensitively at run time)."""

# What each stream in `streamName` must match in full: a name or a stream ARN (io.sparkkinesis.config.StreamNamePatterns).
STREAM_NAME_PATTERN: Final = "[A-Za-z0-9_.-]{1,128}"
STREAM_ARN_PATTERN: Final = "arn:(aws[a-z-]*):kinesis:([a-z0-9-]+):([0-9]{12}):stream/([A-Za-z0-9_.-]{1,128})"


class KinesisOptions:
    """Option names, as the connector spells them (option names are case-insensitive)."""

    STREAM_NAME: Final = "streamName"
    REGION: Final = "region"
    ENDPOINT_URL: Final = "endpointUrl"
    USE_FIPS_ENDPOINT: Final = "useFipsEndpoint"
    USE_DUALSTACK_ENDPOINT: Final = "useDualstackEndpoint"
    CBOR_ENABLED: Final = "cborEnabled"
    AWS_ACCESS_KEY_ID: Final = "awsAccessKeyId"
    AWS_SECRET_KEY: Final = "awsSecretKey"
    AWS_SESSION_TOKEN: Final = "awsSessionToken"
    AWS_PROFILE: Final = "awsProfile"
    ROLE_ARN: Final = "roleArn"
    ROLE_EXTERNAL_ID: Final = "roleExternalId"
    ROLE_SESSION_NAME: Final = "roleSessionName"
    STS_ENDPOINT_URL: Final = "stsEndpointUrl"
    WEB_IDENTITY_TOKEN_FILE: Final = "webIdentityTokenFile"
    WEB_IDENTITY_ROLE_ARN: Final = "webIdentityRoleArn"
    WEB_IDENTITY_ROLE_SESSION_NAME: Final = "webIdentityRoleSessionName"
    CONTAINER_CREDENTIALS_URI: Final = "containerCredentialsUri"
    CONTAINER_AUTHORIZATION_TOKEN_FILE: Final = "containerAuthorizationTokenFile"
    INITIAL_POSITION: Final = "initialPosition"
    INITIAL_TIMESTAMP: Final = "initialTimestamp"
    INITIAL_SHARD_POSITIONS: Final = "initialShardPositions"
    MAX_RECORDS_PER_FETCH: Final = "maxRecordsPerFetch"
    MIN_FETCH_PERIOD: Final = "minFetchPeriod"
    SHARDS_PER_TASK: Final = "shardsPerTask"
    IDLE_FETCH_PERIOD: Final = "idleFetchPeriod"
    MAX_FETCH_RATE: Final = "maxFetchRate"
    FETCH_BUFFER_SIZE: Final = "fetchBufferSize"
    MAX_RECORDS_PER_TRIGGER: Final = "maxRecordsPerTrigger"
    MAX_BYTES_PER_TRIGGER: Final = "maxBytesPerTrigger"
    FAIL_ON_DATA_LOSS: Final = "failOnDataLoss"
    SHARD_DISCOVERY_INTERVAL: Final = "shardDiscoveryInterval"
    STALL_TIMEOUT: Final = "stallTimeout"
    DROP_OUT_OF_RANGE_SUB_RECORDS: Final = "dropOutOfRangeSubRecords"
    CONSUMER_MODE: Final = "consumerMode"
    CONSUMER_NAME: Final = "consumerName"
    CONSUMER_NAME_PREFIX: Final = "consumerNamePrefix"
    REQUIRE_CONSUMER_DEREGISTRATION: Final = "requireConsumerDeregistration"
    REGISTERED_CONSUMER_ID: Final = "registeredConsumerId"
    REGISTERED_CONSUMER_ID_TYPE: Final = "registeredConsumerIdType"
    TABLE_NAME: Final = "tableName"
    DYNAMO_DB_STREAM_ARN: Final = "dynamoDbStreamArn"
    IMAGE_COLUMN_TYPE: Final = "imageColumnType"
    MAX_RECORDS_PER_REQUEST: Final = "maxRecordsPerRequest"
    MAX_REQUEST_SIZE: Final = "maxRequestSize"
    MAX_RECORD_SIZE: Final = "maxRecordSize"
    MAX_RETRIES: Final = "maxRetries"
    MAX_IN_FLIGHT_REQUESTS: Final = "maxInFlightRequests"
    MAX_RETRY_DURATION: Final = "maxRetryDuration"
    MAX_RECORD_DELAY: Final = "maxRecordDelay"
    ORDERING: Final = "ordering"
    PARTITION_KEY_COLUMN: Final = "partitionKeyColumn"
    UNUSED_COLUMNS: Final = "unusedColumns"
    OVERSIZE_RECORD_ACTION: Final = "oversizeRecordAction"
    AGGREGATION: Final = "aggregation"
    AGGREGATION_MAX_SIZE: Final = "aggregationMaxSize"
    CLOUD_WATCH_METRICS: Final = "cloudWatchMetrics"
    CLOUD_WATCH_NAMESPACE: Final = "cloudWatchNamespace"
    CLOUD_WATCH_DIMENSIONS: Final = "cloudWatchDimensions"
    CLOUD_WATCH_ENDPOINT_URL: Final = "cloudWatchEndpointUrl"
    ALLOW_CREATE_STREAM: Final = "allowCreateStream"
    ALLOW_ALTER_STREAM: Final = "allowAlterStream"
    ALLOW_DROP_STREAM: Final = "allowDropStream"
    REGISTRY_ENDPOINT_URL: Final = "registryEndpointUrl"
    REGISTRY_NAME: Final = "registryName"
    SCHEMA_NAME: Final = "schemaName"
    SCHEMA_VERSION_NUMBER: Final = "schemaVersionNumber"
    SCHEMA_DEFINITION: Final = "schemaDefinition"
    DATA_FORMAT: Final = "dataFormat"
    PROTOBUF_MESSAGE_NAME: Final = "protobufMessageName"
    FRAMING: Final = "framing"
    MODE: Final = "mode"
    ERROR_FIELD: Final = "errorField"
    COMPRESSION: Final = "compression"
    AUTO_REGISTRATION: Final = "autoRegistration"
    SCHEMA_CACHE_SIZE: Final = "schemaCacheSize"
    SCHEMA_CACHE_TTL: Final = "schemaCacheTtl"
    MAX_DECOMPRESSED_SIZE: Final = "maxDecompressedSize"


# name, type, scope, default, choices, minimum, maximum, secret, and what a value must be.
OPTIONS: Dict[str, OptionInfo] = {
    "streamName": OptionInfo(
        "streamName", "string", "both", None, (), None, None, False,
        "a non-empty string"),
    "region": OptionInfo(
        "region", "string", "both", None, (), None, None, False,
        "a non-empty string"),
    "endpointUrl": OptionInfo(
        "endpointUrl", "string", "both", None, (), None, None, False,
        "a non-empty string"),
    "useFipsEndpoint": OptionInfo(
        "useFipsEndpoint", "boolean", "both", None, (), None, None, False,
        "true or false"),
    "useDualstackEndpoint": OptionInfo(
        "useDualstackEndpoint", "boolean", "both", None, (), None, None, False,
        "true or false"),
    "cborEnabled": OptionInfo(
        "cborEnabled", "boolean", "both", "true", (), None, None, False,
        "true or false"),
    "awsAccessKeyId": OptionInfo(
        "awsAccessKeyId", "string", "both", None, (), None, None, True,
        "a non-empty string"),
    "awsSecretKey": OptionInfo(
        "awsSecretKey", "string", "both", None, (), None, None, True,
        "a non-empty string"),
    "awsSessionToken": OptionInfo(
        "awsSessionToken", "string", "both", None, (), None, None, True,
        "a non-empty string"),
    "awsProfile": OptionInfo(
        "awsProfile", "string", "both", None, (), None, None, False,
        "a non-empty string"),
    "roleArn": OptionInfo(
        "roleArn", "string", "both", None, (), None, None, False,
        "a non-empty string"),
    "roleExternalId": OptionInfo(
        "roleExternalId", "string", "both", None, (), None, None, True,
        "a non-empty string"),
    "roleSessionName": OptionInfo(
        "roleSessionName", "string", "both", "spark-kinesis", (), None, None, False,
        "a non-empty string"),
    "stsEndpointUrl": OptionInfo(
        "stsEndpointUrl", "string", "both", None, (), None, None, False,
        "a non-empty string"),
    "webIdentityTokenFile": OptionInfo(
        "webIdentityTokenFile", "string", "both", None, (), None, None, False,
        "a non-empty string"),
    "webIdentityRoleArn": OptionInfo(
        "webIdentityRoleArn", "string", "both", None, (), None, None, False,
        "a non-empty string"),
    "webIdentityRoleSessionName": OptionInfo(
        "webIdentityRoleSessionName", "string", "both", "spark-kinesis", (), None, None, False,
        "a non-empty string"),
    "containerCredentialsUri": OptionInfo(
        "containerCredentialsUri", "string", "both", None, (), None, None, False,
        "a non-empty string"),
    "containerAuthorizationTokenFile": OptionInfo(
        "containerAuthorizationTokenFile", "string", "both", None, (), None, None, False,
        "a non-empty string"),
    "initialPosition": OptionInfo(
        "initialPosition", "enum", "source", None, ("latest", "trim_horizon", "earliest", "at_timestamp"), None, None, False,
        "one of latest, trim_horizon, earliest, at_timestamp"),
    "initialTimestamp": OptionInfo(
        "initialTimestamp", "timestamp", "source", None, (), None, None, False,
        "an ISO-8601 instant such as 2026-01-31T12:00:00Z, or milliseconds since the epoch"),
    "initialShardPositions": OptionInfo(
        "initialShardPositions", "string", "source", None, (), None, None, False,
        "a non-empty string"),
    "maxRecordsPerFetch": OptionInfo(
        "maxRecordsPerFetch", "int", "source", "10000", (), 1, 10000, False,
        "a whole number from 1 to 10000"),
    "minFetchPeriod": OptionInfo(
        "minFetchPeriod", "duration", "source", "200ms", (), None, None, False,
        "a duration from 50ms to 240s such as 200ms, 5s or 2m"),
    "shardsPerTask": OptionInfo(
        "shardsPerTask", "int", "source", "1", (), 1, 10000, False,
        "a whole number from 1 to 10000"),
    "idleFetchPeriod": OptionInfo(
        "idleFetchPeriod", "duration", "source", "1s", (), None, None, False,
        "a duration from 200ms to 240s such as 200ms, 5s or 2m"),
    "maxFetchRate": OptionInfo(
        "maxFetchRate", "bytes", "source", "2097152", (), None, None, False,
        "a size in bytes from 1024 to 104857600, optionally with a suffix k, m or g (binary units), e.g. 5m"),
    "fetchBufferSize": OptionInfo(
        "fetchBufferSize", "bytes", "source", "268435456", (), None, None, False,
        "a size in bytes from 1048576 to 68719476736, optionally with a suffix k, m or g (binary units), e.g. 5m"),
    "maxRecordsPerTrigger": OptionInfo(
        "maxRecordsPerTrigger", "long", "source", None, (), 1, 9223372036854775807, False,
        "a whole number from 1 to 9223372036854775807"),
    "maxBytesPerTrigger": OptionInfo(
        "maxBytesPerTrigger", "bytes", "source", None, (), None, None, False,
        "a size in bytes from 1 to 9223372036854775807, optionally with a suffix k, m or g (binary units), e.g. 5m"),
    "failOnDataLoss": OptionInfo(
        "failOnDataLoss", "boolean", "source", "true", (), None, None, False,
        "true or false"),
    "shardDiscoveryInterval": OptionInfo(
        "shardDiscoveryInterval", "duration", "source", "10s", (), None, None, False,
        "a duration from 1s to 3600s such as 200ms, 5s or 2m"),
    "stallTimeout": OptionInfo(
        "stallTimeout", "duration", "source", "600s", (), None, None, False,
        "a duration from 10s to 86400s such as 200ms, 5s or 2m"),
    "dropOutOfRangeSubRecords": OptionInfo(
        "dropOutOfRangeSubRecords", "boolean", "source", "true", (), None, None, False,
        "true or false"),
    "consumerMode": OptionInfo(
        "consumerMode", "enum", "source", "polling", ("polling", "efo"), None, None, False,
        "one of polling, efo"),
    "consumerName": OptionInfo(
        "consumerName", "string", "source", None, (), None, None, False,
        "a non-empty string"),
    "consumerNamePrefix": OptionInfo(
        "consumerNamePrefix", "string", "source", None, (), None, None, False,
        "a non-empty string"),
    "requireConsumerDeregistration": OptionInfo(
        "requireConsumerDeregistration", "boolean", "source", "false", (), None, None, False,
        "true or false"),
    "registeredConsumerId": OptionInfo(
        "registeredConsumerId", "string", "source", None, (), None, None, False,
        "a non-empty string"),
    "registeredConsumerIdType": OptionInfo(
        "registeredConsumerIdType", "enum", "source", "name", ("name", "arn"), None, None, False,
        "one of name, arn"),
    "tableName": OptionInfo(
        "tableName", "string", "source", None, (), None, None, False,
        "a non-empty string"),
    "dynamoDbStreamArn": OptionInfo(
        "dynamoDbStreamArn", "string", "source", None, (), None, None, False,
        "a non-empty string"),
    "imageColumnType": OptionInfo(
        "imageColumnType", "enum", "source", "string", ("string", "variant"), None, None, False,
        "one of string, variant"),
    "maxRecordsPerRequest": OptionInfo(
        "maxRecordsPerRequest", "int", "sink", "500", (), 1, 500, False,
        "a whole number from 1 to 500"),
    "maxRequestSize": OptionInfo(
        "maxRequestSize", "bytes", "sink", None, (), None, None, False,
        "a size in bytes from 1 to 10485760, optionally with a suffix k, m or g (binary units), e.g. 5m"),
    "maxRecordSize": OptionInfo(
        "maxRecordSize", "bytes", "sink", None, (), None, None, False,
        "a size in bytes from 1 to 10485760, optionally with a suffix k, m or g (binary units), e.g. 5m"),
    "maxRetries": OptionInfo(
        "maxRetries", "int", "sink", None, (), 0, 1000, False,
        "a whole number from 0 to 1000"),
    "maxInFlightRequests": OptionInfo(
        "maxInFlightRequests", "int", "sink", "4", (), 1, 64, False,
        "a whole number from 1 to 64"),
    "maxRetryDuration": OptionInfo(
        "maxRetryDuration", "duration", "sink", "120s", (), None, None, False,
        "a duration from 1s to 86400s such as 200ms, 5s or 2m"),
    "maxRecordDelay": OptionInfo(
        "maxRecordDelay", "duration", "sink", None, (), None, None, False,
        "a duration from 1ms to 60s such as 200ms, 5s or 2m"),
    "ordering": OptionInfo(
        "ordering", "enum", "sink", "unordered", ("unordered", "perkey"), None, None, False,
        "one of unordered, perkey"),
    "partitionKeyColumn": OptionInfo(
        "partitionKeyColumn", "string", "sink", None, (), None, None, False,
        "a non-empty string"),
    "unusedColumns": OptionInfo(
        "unusedColumns", "enum", "sink", "fail", ("fail", "ignore"), None, None, False,
        "one of fail, ignore"),
    "oversizeRecordAction": OptionInfo(
        "oversizeRecordAction", "enum", "sink", "fail", ("fail", "drop"), None, None, False,
        "one of fail, drop"),
    "aggregation": OptionInfo(
        "aggregation", "enum", "sink", "none", ("none", "kpl"), None, None, False,
        "one of none, kpl"),
    "aggregationMaxSize": OptionInfo(
        "aggregationMaxSize", "bytes", "sink", "51200", (), None, None, False,
        "a size in bytes from 1024 to 10485760, optionally with a suffix k, m or g (binary units), e.g. 5m"),
    "cloudWatchMetrics": OptionInfo(
        "cloudWatchMetrics", "boolean", "both", "false", (), None, None, False,
        "true or false"),
    "cloudWatchNamespace": OptionInfo(
        "cloudWatchNamespace", "string", "both", "SparkKinesis", (), None, None, False,
        "a non-empty string"),
    "cloudWatchDimensions": OptionInfo(
        "cloudWatchDimensions", "string", "both", None, (), None, None, False,
        "a non-empty string"),
    "cloudWatchEndpointUrl": OptionInfo(
        "cloudWatchEndpointUrl", "string", "both", None, (), None, None, False,
        "a non-empty string"),
    "allowCreateStream": OptionInfo(
        "allowCreateStream", "boolean", "catalog", "false", (), None, None, False,
        "true or false"),
    "allowAlterStream": OptionInfo(
        "allowAlterStream", "boolean", "catalog", "false", (), None, None, False,
        "true or false"),
    "allowDropStream": OptionInfo(
        "allowDropStream", "boolean", "catalog", "false", (), None, None, False,
        "true or false"),
    "registryEndpointUrl": OptionInfo(
        "registryEndpointUrl", "string", "schemaregistry", None, (), None, None, False,
        "a non-empty string"),
    "registryName": OptionInfo(
        "registryName", "string", "schemaregistry", "default-registry", (), None, None, False,
        "a non-empty string"),
    "schemaName": OptionInfo(
        "schemaName", "string", "schemaregistry", None, (), None, None, False,
        "a non-empty string"),
    "schemaVersionNumber": OptionInfo(
        "schemaVersionNumber", "string", "schemaregistry", "latest", (), None, None, False,
        "a non-empty string"),
    "schemaDefinition": OptionInfo(
        "schemaDefinition", "string", "schemaregistry", None, (), None, None, False,
        "a non-empty string"),
    "dataFormat": OptionInfo(
        "dataFormat", "enum", "schemaregistry", None, ("avro", "json", "protobuf"), None, None, False,
        "one of avro, json, protobuf"),
    "protobufMessageName": OptionInfo(
        "protobufMessageName", "string", "schemaregistry", None, (), None, None, False,
        "a non-empty string"),
    "framing": OptionInfo(
        "framing", "enum", "schemaregistry", "glue", ("glue", "none"), None, None, False,
        "one of glue, none"),
    "mode": OptionInfo(
        "mode", "enum", "schemaregistry", "failfast", ("failfast", "permissive"), None, None, False,
        "one of failfast, permissive"),
    "errorField": OptionInfo(
        "errorField", "string", "schemaregistry", "_error", (), None, None, False,
        "a non-empty string"),
    "compression": OptionInfo(
        "compression", "enum", "schemaregistry", "none", ("none", "zlib"), None, None, False,
        "one of none, zlib"),
    "autoRegistration": OptionInfo(
        "autoRegistration", "boolean", "schemaregistry", "false", (), None, None, False,
        "true or false"),
    "schemaCacheSize": OptionInfo(
        "schemaCacheSize", "int", "schemaregistry", "1000", (), 1, 1000000, False,
        "a whole number from 1 to 1000000"),
    "schemaCacheTtl": OptionInfo(
        "schemaCacheTtl", "duration", "schemaregistry", "86400s", (), None, None, False,
        "a duration from 1s to 2592000s such as 200ms, 5s or 2m"),
    "maxDecompressedSize": OptionInfo(
        "maxDecompressedSize", "bytes", "schemaregistry", "67108864", (), None, None, False,
        "a size in bytes from 1024 to 1073741824, optionally with a suffix k, m or g (binary units), e.g. 5m"),
}

# Other connectors' names taken under format("kinesis") (io.sparkkinesis.config.ForeignOptions), each with the
# option it sets here, or None when it has no effect or is refused: passed on for the connector to judge.
FOREIGN_OPTIONS: Dict[str, Optional[str]] = {
    "streamARN": "streamName",
    "endpoint": "endpointUrl",
    "awsAccessKey": "awsAccessKeyId",
    "stsEndpoint": "stsEndpointUrl",
    "shardFetchInterval": "shardDiscoveryInterval",
    "maxFetchDuration": None,
    "consumerRefreshInterval": None,
    "registerConsumerTimeoutInterval": None,
    "maxShardsPerDescribe": None,
    "coalesceThresholdBlockSize": None,
    "coalesceBinSize": None,
    "serviceCredential": None,
    "maxPartitions": None,
    "startingPosition": "initialPosition",
    "awsSTSRoleARN": "roleArn",
    "awsSTSSessionName": "roleSessionName",
    "awsUseInstanceProfile": None,
    "kinesis.executor.maxFetchTimeInMs": None,
    "kinesis.executor.maxFetchRecordsPerShard": None,
    "kinesis.executor.maxRecordPerRead": "maxRecordsPerFetch",
    "kinesis.executor.addIdleTimeBetweenReads": None,
    "kinesis.executor.idleTimeBetweenReadsInMs": "minFetchPeriod",
    "kinesis.client.describeShardInterval": "shardDiscoveryInterval",
    "kinesis.client.numRetries": None,
    "kinesis.client.retryIntervalMs": None,
    "kinesis.client.maxRetryIntervalMs": None,
    "kinesis.client.avoidEmptyBatches": None,
    "kinesis.executor.recordMaxBufferedTime": "maxRecordDelay",
    "kinesis.executor.maxConnections": "maxInFlightRequests",
    "kinesis.executor.aggregationEnabled": "aggregation",
    "kinesis.executor.flushWaitTimeMillis": None,
}
