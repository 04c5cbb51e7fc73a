package io.sparkkinesis.config

import java.time.Duration

import io.sparkkinesis.config.OptionKind._

/**
 * The registry of every option the connector accepts. Validation, the generated `docs/options.md` and the
 * Python constants all come from this list (see [[OptionsDoc]]); add an option here and nowhere else.
 */
private[sparkkinesis] object KinesisOptions {
  private val V0_1 = "0.1.0"
  private val Mi = 1024L * 1024

  // ---- connection ----
  val StreamName: OptionSpec[String] = OptionSpec("streamName", Text, None, Scope.Both, V0_1,
    "The stream(s) to read, as names or stream ARNs separated by commas; for the sink, the stream to write to " +
      "(under `kinesis`, a `stream` column, when present, overrides it per row, and then this option is optional).",
    "Connection", defaultDoc = Some("(required)"))
  val Region: OptionSpec[String] = OptionSpec("region", Text, None, Scope.Both, V0_1,
    "AWS region of the stream(s). Defaults to the region in a stream ARN, then the SDK's default region chain " +
      "(AWS_REGION, profile), then us-east-1 when `endpointUrl` is set.", "Connection",
    defaultDoc = Some("(from ARN or environment)"))
  val EndpointUrl: OptionSpec[String] = OptionSpec("endpointUrl", Text, None, Scope.Both, V0_1,
    "Kinesis endpoint to use instead of the region's, e.g. http://127.0.0.1:4566 for LocalStack or a VPC endpoint.",
    "Connection")
  val UseFipsEndpoint: OptionSpec[Boolean] = OptionSpec("useFipsEndpoint", Bool, None, Scope.Both, V0_1,
    "Call the region's FIPS endpoints (Kinesis, STS, Glue). Unset: the SDK's AWS_USE_FIPS_ENDPOINT or profile key " +
      "`use_fips_endpoint` decides. An explicit endpoint URL wins for its service.", "Connection",
    defaultDoc = Some("(SDK setting)"))
  val UseDualstackEndpoint: OptionSpec[Boolean] = OptionSpec("useDualstackEndpoint", Bool, None, Scope.Both, V0_1,
    "Call the region's dual-stack (IPv4 and IPv6) endpoints (Kinesis, STS, Glue). Unset: the SDK's " +
      "AWS_USE_DUALSTACK_ENDPOINT or profile key `use_dualstack_endpoint` decides. An explicit endpoint URL wins " +
      "for its service.", "Connection", defaultDoc = Some("(SDK setting)"))
  val CborEnabled: OptionSpec[Boolean] = OptionSpec("cborEnabled", Bool, Some(true), Scope.Both, V0_1,
    "Use the CBOR wire format (the SDK default). Set false for servers that mishandle CBOR, such as kinesalite.",
    "Connection")

  // ---- credentials ----
  val AwsAccessKeyId: OptionSpec[String] = OptionSpec("awsAccessKeyId", Text, None, Scope.Both, V0_1,
    "Static access key id. Without it the SDK's default credential chain is used.", "Credentials", secret = true)
  val AwsSecretKey: OptionSpec[String] = OptionSpec("awsSecretKey", Text, None, Scope.Both, V0_1,
    "Static secret key; required with `awsAccessKeyId`.", "Credentials", secret = true)
  val AwsSessionToken: OptionSpec[String] = OptionSpec("awsSessionToken", Text, None, Scope.Both, V0_1,
    "Session token for temporary static credentials.", "Credentials", secret = true)

  val AwsProfile: OptionSpec[String] = OptionSpec("awsProfile", Text, None, Scope.Both, V0_1,
    "Named profile from the AWS config and credentials files (on every executor).", "Credentials")
  val RoleArn: OptionSpec[String] = OptionSpec("roleArn", Text, None, Scope.Both, V0_1,
    "IAM role to assume with STS AssumeRole, on top of the credentials above; refreshed before it expires. Several " +
      "role ARNs separated by commas form a role chain, assumed in order, each with the credentials of the one " +
      "before (docs/credentials.md).", "Credentials")
  val RoleExternalId: OptionSpec[String] = OptionSpec("roleExternalId", Text, None, Scope.Both, V0_1,
    "External id to pass to AssumeRole. With a role chain: one value for every role, or one per role separated by " +
      "commas (empty for none).", "Credentials", secret = true)
  val RoleSessionName: OptionSpec[String] = OptionSpec("roleSessionName", Text, Some("spark-kinesis"), Scope.Both, V0_1,
    "Session name for AssumeRole (shows in CloudTrail). With a role chain: one value for every role, or one per " +
      "role separated by commas (empty for the default).", "Credentials")
  val StsEndpointUrl: OptionSpec[String] = OptionSpec("stsEndpointUrl", Text, None, Scope.Both, V0_1,
    "STS endpoint to use instead of the region's, e.g. a VPC endpoint or a local STS for tests.", "Credentials")
  val WebIdentityTokenFile: OptionSpec[String] = OptionSpec("webIdentityTokenFile", Text, None, Scope.Both, V0_1,
    "Base credentials from STS AssumeRoleWithWebIdentity with the token in this file (on every node), read again " +
      "at each refresh: IAM roles for service accounts on EKS. Needs `webIdentityRoleArn`.", "Credentials")
  val WebIdentityRoleArn: OptionSpec[String] = OptionSpec("webIdentityRoleArn", Text, None, Scope.Both, V0_1,
    "The role `webIdentityTokenFile`'s token is exchanged for.", "Credentials")
  val WebIdentityRoleSessionName: OptionSpec[String] = OptionSpec("webIdentityRoleSessionName", Text,
    Some("spark-kinesis"), Scope.Both, V0_1, "Session name of the web identity role (shows in CloudTrail).",
    "Credentials")
  val ContainerCredentialsUri: OptionSpec[String] = OptionSpec("containerCredentialsUri", Text, None, Scope.Both,
    V0_1,
    "Base credentials from this container credentials endpoint (EKS Pod Identity: " +
      "http://169.254.170.23/v1/credentials; ECS task roles): https, or http to a loopback or the agent's address.",
    "Credentials")
  val ContainerAuthorizationTokenFile: OptionSpec[String] = OptionSpec("containerAuthorizationTokenFile", Text, None,
    Scope.Both, V0_1,
    "File holding the Authorization header for `containerCredentialsUri`, read at each refresh " +
      "(EKS Pod Identity's /var/run/secrets/pods.eks.amazonaws.com/serviceaccount/eks-pod-identity-token).",
    "Credentials")

  // ---- source ----
  val InitialPosition: OptionSpec[String] = OptionSpec("initialPosition",
    Choice(Seq("latest", "trim_horizon", "earliest", "at_timestamp")), None, Scope.Source, V0_1,
    "Where a new query starts in each shard: `latest`, `trim_horizon` (= `earliest`), or `at_timestamp` " +
      "(with `initialTimestamp`). Batch reads cannot start at `latest`.", "Source",
    defaultDoc = Some("latest (streaming), trim_horizon (batch)"))
  val InitialTimestamp: OptionSpec[java.time.Instant] = OptionSpec("initialTimestamp", Timestamp, None, Scope.Source,
    V0_1, "The start time for `initialPosition=at_timestamp`: ISO-8601 (2026-01-31T12:00:00Z) or epoch milliseconds.",
    "Source")
  val InitialShardPositions: OptionSpec[String] = OptionSpec("initialShardPositions", Text, None, Scope.Source,
    V0_1,
    "Where a new query starts in chosen shards, as JSON: stream name to shard id to a sequence number, read " +
      "from the record after it (`{\"orders\": {\"shardId-000000000000\": \"4959...\"}}`), or `{\"at\": \"4959...\"}` to " +
      "start with that record. Shards it does not name start at `initialPosition`; a shard it names that the " +
      "stream does not have is an error.", "Source")
  val MaxRecordsPerFetch: OptionSpec[Int] = OptionSpec("maxRecordsPerFetch", Integer(1, 10000), Some(10000),
    Scope.Source, V0_1, "Records asked for in one GetRecords call (the service maximum is 10,000).", "Source")
  val MinFetchPeriod: OptionSpec[Duration] = OptionSpec("minFetchPeriod",
    TimeSpan(Duration.ofMillis(50), Duration.ofMinutes(4)), Some(Duration.ofMillis(200)), Scope.Source, V0_1,
    "Least time between two GetRecords calls on one shard, empty or not. Kinesis allows 5 calls per second " +
      "per shard shared by all consumers: below 200ms the service throttles and the reader backs off, so lower " +
      "values are for a local server (real-time mode reads at this period too).", "Source")
  val ShardsPerTask: OptionSpec[Int] = OptionSpec("shardsPerTask", Integer(1, 10000), Some(1), Scope.Source, V0_1,
    "How many shards one Spark task reads at least: a batch or prefetch round with more shards than Spark has task " +
      "slots gives each task as many as it takes to have about one task per slot.", "Source")
  val IdleFetchPeriod: OptionSpec[Duration] = OptionSpec("idleFetchPeriod",
    TimeSpan(Duration.ofMillis(200), Duration.ofMinutes(4)), Some(Duration.ofSeconds(1)), Scope.Source, V0_1,
    "Time between GetRecords calls on a shard whose last call found nothing new at the tip: what an idle " +
      "stream costs, and the most latency a first record after a quiet spell waits.", "Source")
  val MaxFetchRate: OptionSpec[Long] = OptionSpec("maxFetchRate", Bytes(1024, 100 * Mi), Some(2 * Mi), Scope.Source,
    V0_1,
    "Bytes per second the prefetcher reads from one shard at most (Kinesis allows 2 MiB/s per shard, " +
      "shared by all polling consumers).", "Source", defaultDoc = Some("2m"))
  val FetchBufferSize: OptionSpec[Long] = OptionSpec("fetchBufferSize", Bytes(Mi, 64L * 1024 * Mi), Some(256 * Mi),
    Scope.Source, V0_1, "Bytes of prefetched records one executor holds at most; reading ahead pauses when full.",
    "Source", defaultDoc = Some("256m"))
  val MaxRecordsPerTrigger: OptionSpec[Long] = OptionSpec("maxRecordsPerTrigger", LongNumber(1, Long.MaxValue), None,
    Scope.Source, V0_1, "Most records in one micro-batch, over all shards (also with Trigger.AvailableNow).", "Source",
    defaultDoc = Some("(no limit)"))
  val MaxBytesPerTrigger: OptionSpec[Long] = OptionSpec("maxBytesPerTrigger", Bytes(1, Long.MaxValue), None,
    Scope.Source, V0_1,
    "Most bytes (data plus partition keys) in one micro-batch, over all shards; a batch " +
      "always takes at least one record of a shard that has one.", "Source", defaultDoc = Some("(no limit)"))
  val FailOnDataLoss: OptionSpec[Boolean] = OptionSpec("failOnDataLoss", Bool, Some(true), Scope.Source, V0_1,
    "Fail the query when records it should read are gone (trimmed by retention). With false it logs a warning, " +
      "counts the loss in the dataLoss metric and goes on from the oldest record available.", "Source")
  val DropOutOfRangeSubRecords: OptionSpec[Boolean] = OptionSpec("dropOutOfRangeSubRecords", Bool, Some(true),
    Scope.Source, V0_1,
    "Drop the user records of a KPL aggregate whose hash key (explicit, else the MD5 of the partition key) lies " +
      "outside the hash key range of the shard the aggregate was read from, as the KCL does: copies a producer put " +
      "in the wrong child after a split and sent again to the right one. Counted in the droppedSubRecords metric. " +
      "With false every user record is read, such copies too. Plain records are never dropped.", "Source")
  val ShardDiscoveryInterval: OptionSpec[Duration] = OptionSpec("shardDiscoveryInterval",
    TimeSpan(Duration.ofSeconds(1), Duration.ofHours(1)), Some(Duration.ofSeconds(10)), Scope.Source, V0_1,
    "How often the driver lists shards (ListShards; DescribeStream for dynamodb-streams) to find shards created by " +
      "resharding. With dynamodb-streams the children of a shard read to its end are also looked up at once " +
      "(DescribeStream's CHILD_SHARDS filter), without listing the stream.", "Source")
  val StallTimeout: OptionSpec[Duration] = OptionSpec("stallTimeout",
    TimeSpan(Duration.ofSeconds(10), Duration.ofHours(24)), Some(Duration.ofMinutes(10)), Scope.Source, V0_1,
    "How long a Trigger.AvailableNow or Trigger.Once query may wait for shards that still have records to read " +
      "before their cutoff without any shard making progress; then it fails with [KINESIS_READ_STALLED] naming " +
      "them, rather than wait forever.", "Source")

  // ---- enhanced fan-out ----
  val ConsumerMode: OptionSpec[String] = OptionSpec("consumerMode", Choice(Seq("polling", "efo")), Some("polling"),
    Scope.Source, V0_1,
    "How streaming reads get records: `polling` (GetRecords, sharing each shard's 2 MB/s with other polling " +
      "readers) or `efo` (enhanced fan-out: SubscribeToShard pushes records to a consumer registered for the " +
      "stream, with its own 2 MB/s per shard). Batch reads always poll. See docs/source.md, \"Enhanced fan-out\".",
    "Enhanced fan-out")
  val ConsumerName: OptionSpec[String] = OptionSpec("consumerName", Text, None, Scope.Source, V0_1,
    "The enhanced fan-out consumer to use, registered on each stream if missing. The default is derived from the " +
      "query's checkpoint location, so a restart reuses the same consumer and another query gets its own.",
    "Enhanced fan-out", defaultDoc = Some("spark-kinesis-<hash of the checkpoint>"))
  val ConsumerNamePrefix: OptionSpec[String] = OptionSpec("consumerNamePrefix", Text, None, Scope.Source, V0_1,
    "Put before the name of a consumer the connector registers (`consumerName`, or the default): for example " +
      "`databricks_` to reuse a consumer the Databricks source registered.", "Enhanced fan-out",
    defaultDoc = Some("(none)"))
  val RequireConsumerDeregistration: OptionSpec[Boolean] = OptionSpec("requireConsumerDeregistration", Bool,
    Some(false), Scope.Source, V0_1,
    "Deregister the consumer when the query stops. Off by default: a restart reuses the registered consumer, and " +
      "AWS charges for a consumer by the hour only while it is registered.", "Enhanced fan-out")
  val RegisteredConsumerId: OptionSpec[String] = OptionSpec("registeredConsumerId", Text, None, Scope.Source, V0_1,
    "A consumer someone else registered and manages, by name or by ARN (see `registeredConsumerIdType`); the " +
      "connector never registers or deregisters it.", "Enhanced fan-out")
  val RegisteredConsumerIdType: OptionSpec[String] = OptionSpec("registeredConsumerIdType",
    Choice(Seq("name", "arn")), Some("name"), Scope.Source, V0_1,
    "Whether `registeredConsumerId` is the consumer's name (looked up on every stream read) or its ARN (one " +
      "stream only).", "Enhanced fan-out")

  // ---- DynamoDB Streams (format "dynamodb-streams", docs/dynamodb-streams.md) ----
  private val DynamoDb = "DynamoDB Streams"
  val TableName: OptionSpec[String] = OptionSpec("tableName", Text, None, Scope.Source, V0_1,
    "With format `dynamodb-streams`: the DynamoDB table whose latest stream to read (found with ListStreams when " +
      "the query is defined). Give it or `dynamoDbStreamArn`.", DynamoDb)
  val StreamArn: OptionSpec[String] = OptionSpec("dynamoDbStreamArn", Text, None, Scope.Source, V0_1,
    "With format `dynamodb-streams`: the ARN of the DynamoDB stream to read " +
      "(arn:aws:dynamodb:<region>:<account>:table/<table>/stream/<label>). Give it or `tableName`.", DynamoDb)
  val ImageColumnType: OptionSpec[String] = OptionSpec("imageColumnType", Choice(Seq("string", "variant")),
    Some("string"), Scope.Source, V0_1,
    "With format `dynamodb-streams`: the type of the `keys`, `newImage` and `oldImage` columns. `string`: " +
      "DynamoDB's typed JSON, as the stream gives it (read it with `from_dynamodb_json`); `variant` (Spark 4.0 and " +
      "later): the item's values as a VARIANT, numbers exact (docs/dynamodb-streams.md).", DynamoDb)

  // ---- sink ----
  val MaxRecordsPerRequest: OptionSpec[Int] = OptionSpec("maxRecordsPerRequest", Integer(1, 500), Some(500),
    Scope.Sink, V0_1, "Entries in one PutRecords call (the service maximum is 500).", "Sink")
  val MaxRequestSize: OptionSpec[Long] = OptionSpec("maxRequestSize", Bytes(1, 10 * Mi), None, Scope.Sink,
    V0_1,
    "Bytes in one PutRecords call, partition keys included. Unset, the service's limit: 5 MiB, or 10 MiB for a " +
      "stream whose records may be larger than 1 MiB (see `maxRecordSize`).", "Sink",
    defaultDoc = Some("5m, or 10m for large records"))
  val MaxRecordSize: OptionSpec[Long] = OptionSpec("maxRecordSize", Bytes(1, 10 * Mi), None, Scope.Sink, V0_1,
    "Largest record, partition key plus data. Unset, each stream's own maximum record size (`MaxRecordSizeInKiB` " +
      "of DescribeStreamSummary: 1 MiB unless raised with UpdateMaxRecordSize, up to 10 MiB; 1 MiB when the " +
      "stream does not say or the writer may not ask).", "Sink",
    defaultDoc = Some("the stream's"))
  val MaxRetries: OptionSpec[Int] = OptionSpec("maxRetries", Integer(0, 1000), None, Scope.Sink, V0_1,
    "How many times one failed record may be sent again before the task fails. Unset, only `maxRetryDuration` " +
      "limits the retries.", "Sink", defaultDoc = Some("no limit"))
  val MaxInFlightRequests: OptionSpec[Int] = OptionSpec("maxInFlightRequests", Integer(1, 64), Some(4), Scope.Sink,
    V0_1,
    "PutRecords calls one task keeps in flight at once (the most; throttling lowers the window, see " +
      "docs/sink.md).", "Sink")
  val MaxRecordDelay: OptionSpec[Duration] = OptionSpec("maxRecordDelay",
    TimeSpan(Duration.ofMillis(1), Duration.ofMinutes(1)), None, Scope.Sink, V0_1,
    "Longest a record waits in a task before a PutRecords call takes it, even a call that is not full. Unset, " +
      "calls leave when full and the rest when the task ends, which suits micro-batches; set it (for example " +
      "10ms) for real-time mode, where a task runs for the whole batch (docs/source.md, \"Real-time mode\").",
    "Sink", defaultDoc = Some("unset"))
  val MaxRetryDuration: OptionSpec[Duration] = OptionSpec("maxRetryDuration",
    TimeSpan(Duration.ofSeconds(1), Duration.ofHours(24)), Some(Duration.ofMinutes(2)), Scope.Sink, V0_1,
    "How long a record may keep failing (from its first failed attempt) before the task fails; with " +
      "`maxRetries` set too, whichever is reached first.", "Sink")
  val OrderingMode: OptionSpec[String] = OptionSpec("ordering", Choice(Seq("unordered", "perkey")), Some("unordered"),
    Scope.Sink, V0_1,
    "`unordered` favours throughput: a retried record can land after records sent later with " +
      "the same partition key. `perKey` keeps input order per partition key under retries, by keeping at most " +
      "one record per key in flight (see docs/sink.md).", "Sink")
  val PartitionKeyColumn: OptionSpec[String] = OptionSpec("partitionKeyColumn", Text, None, Scope.Sink, V0_1,
    "When the input has no `partitionKey` column: the column (string or integer) whose value is each record's " +
      "partition key. Without either, every record gets a random partition key.", "Sink")
  val UnusedColumns: OptionSpec[String] = OptionSpec("unusedColumns", Choice(Seq("fail", "ignore")), Some("fail"),
    Scope.Sink, V0_1,
    "What to do with input columns the sink does not write (any but `data`, `partitionKey`, `explicitHashKey`, " +
      "`streamName` and the `partitionKeyColumn`): `fail` the write when it starts, naming them, or `ignore` them.",
    "Sink")
  val OversizeRecordAction: OptionSpec[String] = OptionSpec("oversizeRecordAction", Choice(Seq("fail", "drop")),
    Some("fail"), Scope.Sink, V0_1,
    "What to do with a record over `maxRecordSize`: `fail` the task with its " +
      "position and size, or `drop` it and count it in the `droppedRecords` metric.", "Sink")
  val Aggregation: OptionSpec[String] = OptionSpec("aggregation", Choice(Seq("none", "kpl")), Some("none"),
    Scope.Sink, V0_1,
    "`kpl` packs records bound for the same shard into KPL-format aggregated records, which " +
      "the source, the KCL and aws-kinesis-agg de-aggregate.", "Sink")
  val AggregationMaxSize: OptionSpec[Long] = OptionSpec("aggregationMaxSize", Bytes(1024, 10 * Mi), Some(51200L),
    Scope.Sink, V0_1,
    "Largest aggregated record with `aggregation=kpl` (partition key included); never above " +
      "`maxRecordSize`.", "Sink", defaultDoc = Some("50k"))

  // ---- metrics (docs/operations.md) ----
  private val Metrics = "Metrics"
  val CloudWatchMetrics: OptionSpec[Boolean] = OptionSpec("cloudWatchMetrics", Bool, Some(false), Scope.Both, V0_1,
    "Publish the query's lag, backlog (`pendingRecords`, `pendingBytes`), throttled calls and records and bytes " +
      "read or written to Amazon CloudWatch, from the driver, once a minute (PutMetricData, with the query's " +
      "credentials and region). A failing CloudWatch never fails the query: it is logged once and retried later.",
    Metrics)
  val CloudWatchNamespace: OptionSpec[String] = OptionSpec("cloudWatchNamespace", Text, Some("SparkKinesis"),
    Scope.Both, V0_1, "The CloudWatch namespace of the published metrics.", Metrics)
  val CloudWatchDimensions: OptionSpec[String] = OptionSpec("cloudWatchDimensions", Text, None, Scope.Both, V0_1,
    "Dimensions added to every published metric besides `QueryName` and `StreamName`, as `Name=value` pairs " +
      "separated by commas, e.g. `Environment=prod,Team=payments` (at most 28).", Metrics,
    defaultDoc = Some("(none)"))
  val CloudWatchEndpointUrl: OptionSpec[String] = OptionSpec("cloudWatchEndpointUrl", Text, None, Scope.Both, V0_1,
    "CloudWatch endpoint to use instead of the region's, e.g. a VPC endpoint or a local server for tests.", Metrics)

  val AllowCreateStream: OptionSpec[Boolean] = OptionSpec("allowCreateStream", Bool, Some(false), Scope.Catalog,
    V0_1,
    "Whether `CREATE TABLE <catalog>.<stream>` may create a stream (provisioned shards and on-demand streams " +
      "are billed by the hour from their creation; docs/sql.md). Set as " +
      "`spark.sql.catalog.<name>.allowCreateStream`.", "Catalog")
  val AllowAlterStream: OptionSpec[Boolean] = OptionSpec("allowAlterStream", Bool, Some(false), Scope.Catalog, V0_1,
    "Whether `ALTER TABLE <catalog>.<stream> SET TBLPROPERTIES ('shardCount' = ..., 'streamMode' = ...)` may " +
      "change the stream's shard count or capacity mode (docs/sql.md). Set as " +
      "`spark.sql.catalog.<name>.allowAlterStream`.", "Catalog")
  val AllowDropStream: OptionSpec[Boolean] = OptionSpec("allowDropStream", Bool, Some(false), Scope.Catalog, V0_1,
    "Whether `DROP TABLE <catalog>.<stream>` may delete the stream and every record in it (a stream with " +
      "registered consumers is never deleted). Set as `spark.sql.catalog.<name>.allowDropStream`.", "Catalog")

  // ---- schema registry functions (docs/schema-registry.md) ----
  private val Registry = "Schema registry"
  val RegistryEndpointUrl: OptionSpec[String] = OptionSpec("registryEndpointUrl", Text, None, Scope.SchemaRegistry,
    V0_1,
    "AWS Glue endpoint to use instead of the region's, e.g. a VPC endpoint or a local server for tests. " +
      "(`endpointUrl` is Kinesis's and is not taken here.)", Registry)
  val RegistryName: OptionSpec[String] = OptionSpec("registryName", Text, Some("default-registry"),
    Scope.SchemaRegistry, V0_1, "The Glue Schema Registry registry of `schemaName`.", Registry)
  val SchemaName: OptionSpec[String] = OptionSpec("schemaName", Text, None, Scope.SchemaRegistry, V0_1,
    "The registered schema: when decoding, the shape every record is read as (its version `schemaVersionNumber`); " +
      "when encoding, the schema records are written with. Give it or `schemaDefinition`.", Registry)
  val SchemaVersionNumber: OptionSpec[String] = OptionSpec("schemaVersionNumber", Text, Some("latest"),
    Scope.SchemaRegistry, V0_1,
    "Which version of `schemaName`: a version number, or `latest` (looked up once, when the query is analyzed).",
    Registry)
  val SchemaDefinition: OptionSpec[String] = OptionSpec("schemaDefinition", Verbatim, None, Scope.SchemaRegistry, V0_1,
    "A schema given in full instead of `schemaName` (an Avro schema's JSON, a JSON Schema, or `.proto` text, as " +
      "`dataFormat` says): the reader schema when decoding, the writer schema when encoding (with `schemaName` " +
      "too, the version of that schema with this definition).", Registry)
  val DataFormat: OptionSpec[String] = OptionSpec("dataFormat", Choice(Seq("avro", "json", "protobuf")), None,
    Scope.SchemaRegistry, V0_1,
    "The format of a `schemaDefinition`; a registered schema says its own.", Registry,
    defaultDoc = Some("(the schema's, else avro)"))
  val ProtobufMessageName: OptionSpec[String] = OptionSpec("protobufMessageName", Text, None, Scope.SchemaRegistry,
    V0_1,
    "With a Protobuf schema, the message values decode to or encode from (full or simple name); needed " +
      "when the `.proto` has more than one top-level message.", Registry,
    defaultDoc = Some("(the one top-level message)"))
  val Framing: OptionSpec[String] = OptionSpec("framing", Choice(Seq("glue", "none")), Some("glue"),
    Scope.SchemaRegistry, V0_1,
    "`glue`: each payload starts with the Glue Schema Registry header (version byte, compression byte, schema " +
      "version id). `none`: plain payloads, written with the schema the options give.", Registry)
  val DecodeMode: OptionSpec[String] = OptionSpec("mode", Choice(Seq("failfast", "permissive")), Some("failfast"),
    Scope.SchemaRegistry, V0_1,
    "`failfast` stops the query at the first payload that cannot be decoded, naming it; `permissive` gives nulls " +
      "and the reason in the field `errorField`.", Registry)
  val ErrorField: OptionSpec[String] = OptionSpec("errorField", Text, Some("_error"), Scope.SchemaRegistry, V0_1,
    "With `mode=permissive`, the name of the string field added to the decoded struct: null, or why the payload " +
      "could not be decoded.", Registry)
  val Compression: OptionSpec[String] = OptionSpec("compression", Choice(Seq("none", "zlib")), Some("none"),
    Scope.SchemaRegistry, V0_1, "When encoding, whether the body of each framed payload is zlib-compressed.", Registry)
  val AutoRegistration: OptionSpec[Boolean] = OptionSpec("autoRegistration", Bool, Some(false), Scope.SchemaRegistry,
    V0_1,
    "When encoding with `schemaDefinition` that is not registered yet, register it as a new version of " +
      "`schemaName` (creating the schema when needed) instead of failing.", Registry)
  val SchemaCacheSize: OptionSpec[Int] = OptionSpec("schemaCacheSize", Integer(1, 1000000), Some(1000),
    Scope.SchemaRegistry, V0_1, "Schema versions one executor keeps; the least recently used leave first.", Registry)
  val SchemaCacheTtl: OptionSpec[Duration] = OptionSpec("schemaCacheTtl",
    TimeSpan(Duration.ofSeconds(1), Duration.ofDays(30)), Some(Duration.ofHours(24)), Scope.SchemaRegistry, V0_1,
    "How long a fetched schema version is used before it is fetched again; while the registry cannot be reached " +
      "the cached one is used on.", Registry)
  val MaxDecompressedSize: OptionSpec[Long] = OptionSpec("maxDecompressedSize", Bytes(1024, 1024 * Mi),
    Some(64 * Mi), Scope.SchemaRegistry, V0_1,
    "When decoding, the largest a zlib-compressed payload's body may inflate to. A larger one is refused as " +
      "undecodable (with `mode=permissive`, a null and the reason), so that a record crafted to inflate to " +
      "gigabytes cannot run an executor out of memory.", Registry)

  val all: Seq[OptionSpec[_]] = Seq(
    StreamName, Region, EndpointUrl, UseFipsEndpoint, UseDualstackEndpoint, CborEnabled,
    AwsAccessKeyId, AwsSecretKey, AwsSessionToken, AwsProfile, RoleArn, RoleExternalId, RoleSessionName, StsEndpointUrl,
    WebIdentityTokenFile, WebIdentityRoleArn, WebIdentityRoleSessionName, ContainerCredentialsUri,
    ContainerAuthorizationTokenFile,
    InitialPosition, InitialTimestamp, InitialShardPositions, MaxRecordsPerFetch, MinFetchPeriod, ShardsPerTask,
    IdleFetchPeriod,
    MaxFetchRate, FetchBufferSize, MaxRecordsPerTrigger, MaxBytesPerTrigger, FailOnDataLoss, ShardDiscoveryInterval,
    StallTimeout, DropOutOfRangeSubRecords,
    ConsumerMode, ConsumerName, ConsumerNamePrefix, RequireConsumerDeregistration, RegisteredConsumerId,
    RegisteredConsumerIdType, TableName, StreamArn, ImageColumnType,
    MaxRecordsPerRequest, MaxRequestSize, MaxRecordSize, MaxRetries, MaxInFlightRequests,
    MaxRetryDuration, MaxRecordDelay, OrderingMode, PartitionKeyColumn, UnusedColumns, OversizeRecordAction,
    Aggregation,
    AggregationMaxSize, CloudWatchMetrics, CloudWatchNamespace, CloudWatchDimensions, CloudWatchEndpointUrl,
    AllowCreateStream, AllowAlterStream, AllowDropStream,
    RegistryEndpointUrl, RegistryName, SchemaName, SchemaVersionNumber, SchemaDefinition, DataFormat,
    ProtobufMessageName, Framing,
    DecodeMode, ErrorField, Compression, AutoRegistration, SchemaCacheSize, SchemaCacheTtl, MaxDecompressedSize)

  /**
   * Defaults that differ under a dialect's format, because that program's users get them there and they change
   * what is written or kept: under `aws-kinesis` the sink aggregates and leaves out the columns it does not write
   * (the awslabs sink did both), and a consumer the connector registered is deregistered when the query stops (as
   * the awslabs source does).
   */
  val dialectDefaults: Map[Dialect, Map[String, String]] = Map(
    Dialect.AwsKinesis -> Map(Aggregation.key -> "kpl", UnusedColumns.key -> "ignore",
      RequireConsumerDeregistration.key -> "true"))

  /**
   * The properties a session catalog keeps beside a table's options (`provider`, `owner`, ...), which Spark hands to
   * the source with them ([[TableOptions]]); accepted and ignored.
   */
  val catalogOwnedKeys: Set[String] =
    Set("provider", "owner", "location", "comment", "external", "is_managed_location", "collation", "table_type")

  /** Keys Spark itself puts into a source's or sink's options; accepted and ignored. */
  val sparkOwnedKeys: Set[String] = Set("path", "checkpointlocation", "queryname", "asyncprogresstrackingenabled",
    "asyncprogresstrackingcheckpointintervalms", "_asyncprogresstrackingoverridesinksupportcheck")

  require(all.map(_.key).distinct.size == all.size, "duplicate option names in the registry")
}
