package io.sparkkinesis.config

import java.time.Duration

import io.sparkkinesis.config.OptionKind._

/**
 * The registry of every option the connector accepts. Validation, the generated `docs/options.md` and the
 * Python constants all come from this list (see [[OptionsDoc]]); add an option here and nowhere else.
 */
object KinesisOptions {
  private val V0_1 = "0.1.0"
  private val Mi = 1024L * 1024

  // ---- connection ----
  val StreamName: OptionSpec[String] = OptionSpec("streamName", Text, None, Scope.Both, V0_1,
    "The stream(s) to read, as names or stream ARNs separated by commas; for the sink, the stream to write to " +
      "(a `streamName` column, when present, overrides it per row).", "Connection",
    defaultDoc = Some("(required)"))
  val Region: OptionSpec[String] = OptionSpec("region", Text, None, Scope.Both, V0_1,
    "AWS region of the stream(s). Defaults to the region in a stream ARN, then the SDK's default region chain " +
      "(AWS_REGION, profile), then us-east-1 when `endpointUrl` is set.", "Connection",
    defaultDoc = Some("(from ARN or environment)"))
  val EndpointUrl: OptionSpec[String] = OptionSpec("endpointUrl", Text, None, Scope.Both, V0_1,
    "Kinesis endpoint to use instead of the region's, e.g. http://127.0.0.1:4566 for LocalStack or a VPC endpoint.",
    "Connection")
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

  // ---- source ----
  val InitialPosition: OptionSpec[String] = OptionSpec("initialPosition",
    Choice(Seq("latest", "trim_horizon", "earliest", "at_timestamp")), None, Scope.Source, V0_1,
    "Where a new query starts in each shard: `latest`, `trim_horizon` (= `earliest`), or `at_timestamp` " +
      "(with `initialTimestamp`). Batch reads cannot start at `latest`.", "Source",
    defaultDoc = Some("latest (streaming), trim_horizon (batch)"))
  val InitialTimestamp: OptionSpec[java.time.Instant] = OptionSpec("initialTimestamp", Timestamp, None, Scope.Source,
    V0_1, "The start time for `initialPosition=at_timestamp`: ISO-8601 (2026-01-31T12:00:00Z) or epoch milliseconds.",
    "Source")
  val MaxRecordsPerFetch: OptionSpec[Int] = OptionSpec("maxRecordsPerFetch", Integer(1, 10000), Some(10000),
    Scope.Source, V0_1, "Records asked for in one GetRecords call (the service maximum is 10,000).", "Source")
  val MinFetchPeriod: OptionSpec[Duration] = OptionSpec("minFetchPeriod",
    TimeSpan(Duration.ofMillis(200), Duration.ofMinutes(4)), Some(Duration.ofMillis(200)), Scope.Source, V0_1,
    "Least time between two GetRecords calls on one shard, empty or not. Kinesis allows 5 calls per second " +
      "per shard shared by all consumers, so 200ms is the floor.", "Source")
  val ShardsPerTask: OptionSpec[Int] = OptionSpec("shardsPerTask", Integer(1, 10000), Some(1), Scope.Source, V0_1,
    "How many shards one Spark task reads.", "Source")

  // ---- sink ----
  val MaxRecordsPerRequest: OptionSpec[Int] = OptionSpec("maxRecordsPerRequest", Integer(1, 500), Some(500),
    Scope.Sink, V0_1, "Entries in one PutRecords call (the service maximum is 500).", "Sink")
  val MaxRequestSize: OptionSpec[Long] = OptionSpec("maxRequestSize", Bytes(1, 10 * Mi), Some(5 * Mi), Scope.Sink,
    V0_1, "Bytes in one PutRecords call, partition keys included (the service limit is 5 MiB, or 10 MiB " +
      "for streams configured for large records).", "Sink", defaultDoc = Some("5m"))
  val MaxRecordSize: OptionSpec[Long] = OptionSpec("maxRecordSize", Bytes(1, 10 * Mi), Some(Mi), Scope.Sink, V0_1,
    "Largest record, partition key plus data (1 MiB unless the stream's maximum record size was raised).", "Sink",
    defaultDoc = Some("1m"))
  val MaxRetries: OptionSpec[Int] = OptionSpec("maxRetries", Integer(0, 1000), Some(10), Scope.Sink, V0_1,
    "How many times failed entries of a PutRecords call are sent again before the task fails.", "Sink")
  val MaxInFlightRequests: OptionSpec[Int] = OptionSpec("maxInFlightRequests", Integer(1, 64), Some(4), Scope.Sink,
    V0_1, "PutRecords calls one task keeps in flight at once.", "Sink")

  val all: Seq[OptionSpec[_]] = Seq(
    StreamName, Region, EndpointUrl, CborEnabled,
    AwsAccessKeyId, AwsSecretKey, AwsSessionToken,
    InitialPosition, InitialTimestamp, MaxRecordsPerFetch, MinFetchPeriod, ShardsPerTask,
    MaxRecordsPerRequest, MaxRequestSize, MaxRecordSize, MaxRetries, MaxInFlightRequests)

  /** Keys Spark itself puts into a source's or sink's options; accepted and ignored. */
  val sparkOwnedKeys: Set[String] = Set("path", "checkpointlocation", "queryname")

  require(all.map(_.key).distinct.size == all.size, "duplicate option names in the registry")
}
