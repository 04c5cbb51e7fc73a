package io.sparkkinesis.config

import io.sparkkinesis.config.{KinesisOptions => O}
import io.sparkkinesis.config.ForeignOption.{Alias, Ignored, Refused}

/**
 * Other connectors' option names, so that their programs run here unchanged: Databricks' and qubole kinesis-sql's
 * under `format("kinesis")`, the awslabs connector's `kinesis.*` names under `format("aws-kinesis")`. Each is an
 * alias of one of this connector's options (same meaning, sometimes another form of value), or accepted with a
 * warning that it has no effect here and why, or refused with what to use instead. `docs/options.md` lists them
 * (generated), `docs/migrating.md` explains them per program.
 */
private[sparkkinesis] object ForeignOptions {
  private val Databricks = "Databricks"
  private val Qubole = "qubole kinesis-sql"
  private val Awslabs = "awslabs"

  private val NoPrefetchTasks = "batches end where the driver's prefetch rounds find them (docs/design.md); " +
    "size them with maxRecordsPerTrigger or maxBytesPerTrigger"
  private val NoSideStore = "this connector keeps every batch's range in Spark's offset log and writes no " +
    "metadata of its own (spark.sql.streaming.minBatchesToRetain governs the log)"
  private val OwnRetries = "Kinesis calls are retried with jittered exponential backoff under one policy " +
    "(throttling without limit, other failures a few times); docs/operations.md"

  private def databricks(name: String, scope: Scope, h: ForeignOption.Handling) =
    ForeignOption(name, Databricks, Dialect.Kinesis, scope, h)
  private def qubole(name: String, scope: Scope, h: ForeignOption.Handling) =
    ForeignOption(name, Qubole, Dialect.Kinesis, scope, h)
  private def awslabs(name: String, scope: Scope, h: ForeignOption.Handling) =
    ForeignOption(name, Awslabs, Dialect.AwsKinesis, scope, h)

  import Scope.{Both, Sink, Source}

  val all: Seq[ForeignOption] = Seq(
    // ---- Databricks (format "kinesis") ----
    databricks("streamARN", Source, Alias(O.StreamName, "stream ARNs, comma-separated, are taken by streamName")),
    databricks("endpoint", Both,
      Alias(O.EndpointUrl, "a host name without a scheme is reached over https",
        Some(ForeignValues.endpoint(O.EndpointUrl)))),
    databricks("awsAccessKey", Both, Alias(O.AwsAccessKeyId)),
    databricks("stsEndpoint", Both,
      Alias(O.StsEndpointUrl, "a host name without a scheme is reached over https",
        Some(ForeignValues.endpoint(O.StsEndpointUrl)))),
    databricks("shardFetchInterval", Source, Alias(O.ShardDiscoveryInterval)),
    databricks("initialPosition", Source,
      Alias(O.InitialPosition,
        "also takes Databricks' JSON form {\"at_timestamp\": ..., \"format\": ...}",
        Some(ForeignValues.databricksInitialPosition))),
    databricks("maxFetchRate", Source,
      Alias(O.MaxFetchRate,
        "also takes Databricks' form, MB/s as a decimal number (1.5)", Some(ForeignValues.databricksFetchRate))),
    databricks("maxFetchDuration", Source,
      Ignored("prefetch tasks here stop when their shards are caught up or " +
        "their read budget is spent, not after a set time; minFetchPeriod and idleFetchPeriod pace them")),
    databricks("consumerRefreshInterval", Source,
      Ignored("the consumer is looked up (or registered) when the query " +
        "starts, and a subscription that fails is renewed at once")),
    databricks("registerConsumerTimeoutInterval", Source, Ignored("a consumer may take up to 180 s to become ACTIVE")),
    databricks("maxShardsPerDescribe", Source, Ignored("ListShards pages as the service allows")),
    databricks("coalesceThresholdBlockSize", Source, Ignored("prefetched records are not coalesced into blocks")),
    databricks("coalesceBinSize", Source, Ignored("prefetched records are not coalesced into blocks")),
    databricks("serviceCredential", Both,
      Refused("Unity Catalog service credentials exist only on Databricks: " +
        "use 'roleArn' (with 'roleExternalId'), 'awsProfile', 'awsAccessKeyId' and 'awsSecretKey', or the default " +
        "credential chain (docs/credentials.md)")),
    databricks("maxPartitions", Source,
      Refused("set 'shardsPerTask' instead: the number of tasks is the number " +
        "of readable shards divided by shardsPerTask")),
    // ---- qubole kinesis-sql and its forks, Glue's lineage (format "kinesis") ----
    qubole("startingPosition", Source,
      Alias(O.InitialPosition, "LATEST, TRIM_HORIZON or EARLIEST",
        Some(ForeignValues.startingPosition))),
    qubole("awsSTSRoleARN", Both, Alias(O.RoleArn)),
    qubole("awsSTSSessionName", Both, Alias(O.RoleSessionName)),
    qubole("awsUseInstanceProfile", Both,
      Ignored("without keys, a profile or a role, the SDK's default " +
        "credential chain is used, which includes the instance profile")),
    qubole("kinesis.executor.maxFetchTimeInMs", Source, Ignored(NoPrefetchTasks)),
    qubole("kinesis.executor.maxFetchRecordsPerShard", Source, Ignored(NoPrefetchTasks)),
    qubole("kinesis.executor.maxRecordPerRead", Source, Alias(O.MaxRecordsPerFetch)),
    qubole("kinesis.executor.addIdleTimeBetweenReads", Source,
      Ignored("calls on a shard are always at least " +
        "minFetchPeriod apart")),
    qubole("kinesis.executor.idleTimeBetweenReadsInMs", Source, Alias(O.MinFetchPeriod)),
    qubole("kinesis.client.describeShardInterval", Source,
      Alias(O.ShardDiscoveryInterval, "at least 1s here",
        Some(ForeignValues.discoveryInterval))),
    qubole("kinesis.client.numRetries", Both, Ignored(OwnRetries)),
    qubole("kinesis.client.retryIntervalMs", Both, Ignored(OwnRetries)),
    qubole("kinesis.client.maxRetryIntervalMs", Both, Ignored(OwnRetries)),
    qubole("kinesis.client.avoidEmptyBatches", Source, Ignored("a trigger that finds no new record runs no batch")),
    qubole("kinesis.executor.recordMaxBufferedTime", Sink, Alias(O.MaxRecordDelay)),
    qubole("kinesis.executor.maxConnections", Sink, Alias(O.MaxInFlightRequests)),
    qubole("kinesis.executor.aggregationEnabled", Sink,
      Alias(O.Aggregation, "true is aggregation=kpl",
        Some(ForeignValues.aggregationEnabled))),
    qubole("kinesis.executor.flushWaitTimeMillis", Sink,
      Ignored("a task ends once PutRecords acknowledged every " +
        "record")),
    // ---- awslabs (format "aws-kinesis") ----
    awslabs("kinesis.streamName", Both, Alias(O.StreamName)),
    awslabs("kinesis.endpointUrl", Both, Alias(O.EndpointUrl)),
    awslabs("kinesis.region", Both, Alias(O.Region)),
    awslabs("kinesis.kinesisRegion", Both, Alias(O.Region, "the stream's region; give it or kinesis.region")),
    awslabs("kinesis.consumerType", Source,
      Alias(O.ConsumerMode, "GetRecords is polling, SubscribeToShard efo",
        Some(ForeignValues.consumerType))),
    awslabs("kinesis.consumerName", Source, Alias(O.ConsumerName)),
    awslabs("kinesis.failOnDataLoss", Source, Alias(O.FailOnDataLoss, "true by default here, false there")),
    awslabs("kinesis.startingPosition", Source,
      Alias(O.InitialPosition,
        "LATEST, TRIM_HORIZON, EARLIEST or AT_TIMESTAMP <ISO time>", Some(ForeignValues.startingPosition))),
    awslabs("kinesis.describeShardInterval", Source,
      Alias(O.ShardDiscoveryInterval, "at least 1s here",
        Some(ForeignValues.discoveryInterval))),
    awslabs("kinesis.maxFetchRecordsPerShard", Source, Ignored(NoPrefetchTasks)),
    awslabs("kinesis.maxFetchTimePerShardSec", Source, Ignored(NoPrefetchTasks)),
    awslabs("kinesis.minBatchesToRetain", Source, Ignored(NoSideStore)),
    awslabs("kinesis.checkNewRecordThreads", Source,
      Ignored("the driver looks at quiet shards with up to 8 calls " +
        "at once")),
    awslabs("kinesis.metadataCommitterType", Source, Ignored(NoSideStore)),
    awslabs("kinesis.metadataPath", Source,
      Ignored(NoSideStore + "; a checkpoint of the awslabs connector is read " +
        "from its default place (docs/migrating.md)")),
    awslabs("kinesis.metadataNumRetries", Source, Ignored(NoSideStore)),
    awslabs("kinesis.metadataRetryIntervalsMs", Source, Ignored(NoSideStore)),
    awslabs("kinesis.metadataMaxRetryIntervalMs", Source, Ignored(NoSideStore)),
    awslabs("kinesis.dynamodb.tableName", Source, Ignored(NoSideStore)),
    awslabs("kinesis.clientNumRetries", Both, Ignored(OwnRetries)),
    awslabs("kinesis.clientRetryIntervalsMs", Both, Ignored(OwnRetries)),
    awslabs("kinesis.clientMaxRetryIntervalMs", Both, Ignored(OwnRetries)),
    awslabs("kinesis.stsRoleArn", Both, Alias(O.RoleArn)),
    awslabs("kinesis.stsSessionName", Both, Alias(O.RoleSessionName)),
    awslabs("kinesis.stsEndpointUrl", Both, Alias(O.StsEndpointUrl)),
    awslabs("kinesis.awsAccessKeyId", Both, Alias(O.AwsAccessKeyId)),
    awslabs("kinesis.awsSecretKey", Both, Alias(O.AwsSecretKey)),
    awslabs("kinesis.sessionToken", Both, Alias(O.AwsSessionToken)),
    awslabs("kinesis.credentialProviderClass", Both,
      Refused("custom credential provider classes are not loaded: " +
        "use 'roleArn', 'awsProfile', static keys or the default credential chain (docs/credentials.md)")),
    awslabs("kinesis.credentialProviderParam", Both,
      Refused("custom credential provider classes are not loaded: " +
        "use 'roleArn', 'awsProfile', static keys or the default credential chain (docs/credentials.md)")),
    awslabs("kinesis.subscribeToShard.timeoutSec", Source,
      Ignored("a subscription that delivers nothing is " +
        "renewed; stallTimeout bounds an AvailableNow query that cannot progress")),
    awslabs("kinesis.subscribeToShard.maxRetries", Source, Ignored(OwnRetries)),
    awslabs("kinesis.getRecords.numberOfRecordsPerFetch", Source, Alias(O.MaxRecordsPerFetch)),
    awslabs("kinesis.getRecords.fetchIntervalMs", Source, Alias(O.MinFetchPeriod)),
    awslabs("kinesis.sink.flushWaitTimeMs", Sink, Ignored("a task ends once PutRecords acknowledged every record")),
    awslabs("kinesis.sink.recordMaxBufferedTimeMs", Sink, Alias(O.MaxRecordDelay)),
    awslabs("kinesis.sink.maxConnections", Sink, Alias(O.MaxInFlightRequests, "PutRecords calls in flight per task")),
    awslabs("kinesis.sink.aggregationEnabled", Sink,
      Alias(O.Aggregation,
        "true (their default, and the default under aws-kinesis) is aggregation=kpl",
        Some(ForeignValues.aggregationEnabled))),
    awslabs("kinesis.sink.recordTtl", Sink,
      Alias(O.MaxRetryDuration,
        "a record past it fails the task here; " +
          "there it was dropped")),
    awslabs("kinesis.sink.proxyAddress", Sink,
      Refused("give the JVM's proxy settings to the driver and executors " +
        "(docs/deploying.md)")),
    awslabs("kinesis.sink.proxyPort", Sink,
      Refused("give the JVM's proxy settings to the driver and executors " +
        "(docs/deploying.md)")),
    awslabs("kinesis.sink.proxyUsername", Sink,
      Refused("give the JVM's proxy settings to the driver and executors " +
        "(docs/deploying.md)")),
    awslabs("kinesis.sink.proxyPassword", Sink,
      Refused("give the JVM's proxy settings to the driver and executors " +
        "(docs/deploying.md)")))

  /** Prefixes of internal options of a dialect: accepted with a warning, whatever follows. */
  val ignoredPrefixes: Seq[(Dialect, String, String)] = Seq(
    (Dialect.AwsKinesis, "kinesis.internal.", "it tunes the awslabs connector's own reader"))

  private val byDialect: Map[Dialect, Map[String, ForeignOption]] =
    all.groupBy(_.dialect).map { case (d, opts) => d -> opts.map(o => o.key -> o).toMap }

  def find(dialect: Dialect, key: String): Option[ForeignOption] = byDialect.getOrElse(dialect, Map.empty).get(key)

  /** A foreign name of another dialect (for the error that points to the right format). */
  def elsewhere(dialect: Dialect, key: String): Option[ForeignOption] =
    all.find(o => o.dialect != dialect && o.key == key && !KinesisOptions.all.exists(_.key == key))

  require(all.map(o => (o.dialect, o.key)).distinct.size == all.size, "duplicate foreign option names")
}
