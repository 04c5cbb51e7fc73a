package io.sparkkinesis.config

import java.time.{Duration, Instant}

import io.sparkkinesis.compat.CollectionConverters._
import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.aws.{ConsumerSpec, CredentialsConfig}
import io.sparkkinesis.errors.KinesisOptionException
import io.sparkkinesis.writer.SinkOptions
import io.sparkkinesis.source.SourceOptions

/** Other connectors' option names: read as this connector's, without effect (warned), or refused. */
class ForeignOptionsSuite extends AnyFunSuite {
  private val local = Map("region" -> "us-east-1", "endpointUrl" -> "http://127.0.0.1:4567")

  private def parsed(
      options: Map[String, String],
      scope: Scope = Scope.Source,
      dialect: Dialect = Dialect.Kinesis): ParsedOptions = ParsedOptions(options, scope, dialect)

  private def fails(
      options: Map[String, String],
      scope: Scope = Scope.Source,
      dialect: Dialect = Dialect.Kinesis)(use: ParsedOptions => Any = identity): String =
    intercept[KinesisOptionException](use(ParsedOptions(options, scope, dialect))).getMessage

  test("Databricks' connection and credential names are this connector's options") {
    val o = SourceOptions.parse(Map("streamARN" -> "arn:aws:kinesis:eu-west-1:123456789012:stream/orders",
        "endpoint" -> "kinesis.eu-west-1.amazonaws.com", "awsAccessKey" -> "AKIA1", "awsSecretKey" -> "s3cr3t",
        "shardFetchInterval" -> "2s").asJava)
    assert(o.streams.map(_.name) == Seq("orders"))
    assert(o.connection.region == "eu-west-1")
    assert(o.connection.endpointUrl.contains("https://kinesis.eu-west-1.amazonaws.com"))
    assert(o.connection.credentials == CredentialsConfig.StaticKeys("AKIA1", "s3cr3t", None))
    assert(o.shardDiscoveryMillis == 2000L)
    val sts = SourceOptions.parse((local ++ Map("streamName" -> "s", "roleArn" -> "arn:aws:iam::123456789012:role/r",
        "stsEndpoint" -> "http://127.0.0.1:9000")).asJava)
    assert(sts.connection.credentials.asInstanceOf[CredentialsConfig.AssumeRole].stsEndpointUrl
        .contains("http://127.0.0.1:9000"))
  }

  test("Databricks' JSON form of initialPosition is at_timestamp, in its own date pattern or ISO-8601") {
    val pdt = SourceOptions.parse((local ++ Map("streamName" -> "s",
        "initialPosition" ->
          """{"at_timestamp": "06/25/2020 10:23:45 PDT", "format": "MM/dd/yyyy HH:mm:ss ZZZ"}""")).asJava)
    assert(pdt.initialPosition.contains(
        io.sparkkinesis.offsets.StartPosition.AtTimestamp(Instant.parse("2020-06-25T17:23:45Z").toEpochMilli)))
    val iso = SourceOptions.parse((local ++ Map("streamName" -> "s",
        "initialPosition" -> """{"at_timestamp": "2026-01-31T12:00:00Z"}""")).asJava)
    assert(iso.initialPosition.contains(io.sparkkinesis.offsets.StartPosition.AtTimestamp(1769860800000L)))
    val bad = fails(Map("streamName" -> "s", "initialPosition" -> """{"at_timestamp": "yesterday"}"""))()
    assert(bad.startsWith("[KINESIS_INVALID_OPTION_VALUE] Option 'initialPosition' has the value"))
    assert(bad.contains("\"format\": \"MM/dd/yyyy HH:mm:ss ZZZ\""))
    val twice = fails(Map("initialPosition" -> """{"at_timestamp": "2026-01-31T12:00:00Z"}""",
        "initialTimestamp" -> "2026-01-31T12:00:00Z"))()
    assert(twice.startsWith("[KINESIS_CONFLICTING_OPTIONS]") && twice.contains("'initialTimestamp'"))
  }

  test("Databricks' maxFetchRate in MB/s is read as such; a size with a suffix keeps its meaning") {
    assert(parsed(Map("maxFetchRate" -> "1.5")).get(KinesisOptions.MaxFetchRate).contains(1572864L))
    assert(parsed(Map("maxFetchRate" -> "2m")).get(KinesisOptions.MaxFetchRate).contains(2097152L))
    assert(parsed(Map("maxFetchRate" -> "2097152")).get(KinesisOptions.MaxFetchRate).contains(2097152L))
    assert(parsed(Map("fetchBufferSize" -> "20gb")).get(KinesisOptions.FetchBufferSize).contains(20L << 30))
  }

  test("an option without effect here is accepted with a warning that says why; a refused one names what to use") {
    val o = parsed(Map("streamName" -> "s", "maxFetchDuration" -> "10s", "coalesceBinSize" -> "128000000"))
    assert(o.warnings == Seq(
      "Option 'coalesceBinSize' of the Databricks connector has no effect here: prefetched records are not " +
        "coalesced into blocks.",
      "Option 'maxFetchDuration' of the Databricks connector has no effect here: prefetch tasks here stop when " +
        "their shards are caught up or their read budget is spent, not after a set time; minFetchPeriod and " +
        "idleFetchPeriod pace them."))
    val refused = fails(Map("streamName" -> "s", "serviceCredential" -> "my-credential"))()
    assert(refused.startsWith("[KINESIS_UNSUPPORTED_OPTION] Option 'serviceCredential' of the Databricks connector"))
    assert(refused.contains("'roleArn'") && !refused.contains("my-credential"))
    assert(fails(Map("maxPartitions" -> "4"))().contains("set 'shardsPerTask' instead"))
  }

  test("one option under two names is refused, naming both; errors name the option as it was given") {
    val both = fails(Map("awsAccessKey" -> "a", "awsAccessKeyId" -> "b"))()
    assert(both == "[KINESIS_CONFLICTING_OPTIONS] Options 'awsAccessKey' and 'awsAccessKeyId' both set " +
      "'awsAccessKeyId'; give it once.")
    assert(fails(Map("streamName" -> "a", "streamARN" -> "arn:aws:kinesis:eu-west-1:1:stream/b"))()
        .startsWith("[KINESIS_CONFLICTING_OPTIONS]"))
    val value = fails(Map("kinesis.getRecords.numberOfRecordsPerFetch" -> "20000"), dialect = Dialect.AwsKinesis)(
      _.get(KinesisOptions.MaxRecordsPerFetch))
    assert(value.startsWith("[KINESIS_INVALID_OPTION_VALUE] Option 'kinesis.getRecords.numberOfRecordsPerFetch'"))
    val secret = fails(Map("kinesis.awsSecretKey" -> " "), dialect = Dialect.AwsKinesis)(
      _.get(KinesisOptions.AwsSecretKey))
    assert(secret.contains("has the value (hidden)"))
  }

  test("the awslabs README's source options are this connector's under aws-kinesis, with their defaults") {
    val polling = SourceOptions.parse(Map("kinesis.region" -> "us-east-2", "kinesis.streamName" -> "teststream",
        "kinesis.consumerType" -> "GetRecords", "kinesis.endpointUrl" -> "http://127.0.0.1:4567",
        "kinesis.startingposition" -> "LATEST", "kinesis.getRecords.fetchIntervalMs" -> "400",
        "kinesis.describeShardInterval" -> "100ms", "kinesis.metadataCommitterType" -> "HDFS").asJava,
      Dialect.AwsKinesis)
    assert(polling.connection.region == "us-east-2" && polling.streams.map(_.name) == Seq("teststream"))
    assert(polling.initialPosition.contains(io.sparkkinesis.offsets.StartPosition.Latest))
    assert(!polling.fanOut && polling.fetch.minPeriodMillis == 400L && polling.shardDiscoveryMillis == 1000L)
    assert(polling.fetch.failOnDataLoss, "failOnDataLoss stays true by default under aws-kinesis")
    val efo = SourceOptions.parse(Map("kinesis.region" -> "us-east-2", "kinesis.streamName" -> "teststream",
        "kinesis.consumerType" -> "SubscribeToShard", "kinesis.endpointUrl" -> "http://127.0.0.1:4567",
        "kinesis.startingPosition" -> "AT_TIMESTAMP 2023-08-30T19:00:05-08:00",
        "kinesis.consumerName" -> "TestConsumer").asJava, Dialect.AwsKinesis)
    assert(efo.consumer.contains(ConsumerSpec.Managed(Some("TestConsumer"), deregisterOnStop = true)))
    assert(efo.initialPosition.contains(
        io.sparkkinesis.offsets.StartPosition.AtTimestamp(Instant.parse("2023-08-31T03:00:05Z").toEpochMilli)))
    assert(fails(Map("kinesis.startingPosition" -> "AT_TIMESTAMP soon"), dialect = Dialect.AwsKinesis)()
        .contains("AT_TIMESTAMP followed by an ISO-8601 time"))
  }

  test("the awslabs sink options are this connector's; their sink aggregates by default, ours does not") {
    val base = Map("kinesis.region" -> "us-east-1", "kinesis.streamName" -> "sparkSinkTest",
      "kinesis.endpointUrl" -> "https://kinesis.us-east-1.amazonaws.com")
    val theirs = SinkOptions.parse((base ++ Map("kinesis.sink.recordMaxBufferedTimeMs" -> "1000",
        "kinesis.sink.maxConnections" -> "2", "kinesis.sink.recordTtl" -> "30000",
        "kinesis.sink.flushWaitTimeMs" -> "100")).asJava, hasStreamColumn = false, Dialect.AwsKinesis)
    assert(theirs.aggregationMaxBytes.isDefined && theirs.maxRecordDelayMillis.contains(1000L))
    assert(theirs.maxInFlightRequests == 2)
    val off = SinkOptions.parse((base + ("kinesis.sink.aggregationEnabled" -> "false")).asJava,
      hasStreamColumn = false, Dialect.AwsKinesis)
    assert(off.aggregationMaxBytes.isEmpty)
    val ours = SinkOptions.parse(Map("streamName" -> "s", "region" -> "us-east-1").asJava, hasStreamColumn = false)
    assert(ours.aggregationMaxBytes.isEmpty)
  }

  test("a name of the other format is refused with the format that takes it") {
    val awslabs = fails(Map("kinesis.streamName" -> "s"))()
    assert(
      awslabs.startsWith("[KINESIS_UNKNOWN_OPTION] Unknown option 'kinesis.streamName' for the Kinesis source or " +
        "sink under format(\"kinesis\"). It is the awslabs connector's name, taken under format(\"aws-kinesis\"): use " +
        "that format, or this connector's name for it (docs/migrating.md)."), awslabs)
    assert(fails(Map("awsAccessKey" -> "a"), dialect = Dialect.AwsKinesis)().contains("format(\"kinesis\")"))
    assert(fails(Map("kinesis.sink.maxConnections" -> "1"), Scope.Source, Dialect.AwsKinesis)()
        .startsWith("[KINESIS_OPTION_NOT_APPLICABLE] Option 'kinesis.sink.maxConnections' applies to the Kinesis sink"))
  }

  test("qubole's names under format kinesis, and consumerNamePrefix before the consumer's name") {
    val q = SourceOptions.parse((local ++ Map("streamName" -> "s", "startingposition" -> "TRIM_HORIZON",
        "awsSTSRoleARN" -> "arn:aws:iam::123456789012:role/r", "awsSTSSessionName" -> "job",
        "kinesis.executor.maxRecordPerRead" -> "500", "kinesis.client.describeShardInterval" -> "5s")).asJava)
    assert(q.initialPosition.contains(io.sparkkinesis.offsets.StartPosition.TrimHorizon))
    assert(q.fetch.maxRecordsPerCall == 500 && q.shardDiscoveryMillis == 5000L)
    assert(q.connection.credentials.asInstanceOf[CredentialsConfig.AssumeRole].sessionName == "job")
    val prefixed = SourceOptions.parse((local ++ Map("streamName" -> "s", "consumerMode" -> "efo",
        "consumerName" -> "etl", "consumerNamePrefix" -> "databricks_")).asJava)
    assert(prefixed.consumer.contains(ConsumerSpec.Managed(Some("databricks_etl"), deregisterOnStop = false,
          "databricks_")))
    assert(Duration.ofSeconds(5).toMillis == q.shardDiscoveryMillis)
  }

  test("every foreign alias names an option of the registry, and no foreign name shadows one of ours by mistake") {
    ForeignOptions.all.foreach { f =>
      val own = KinesisOptions.all.find(_.key == f.key)
      f.handling match {
        case ForeignOption.Alias(target, _, translate) =>
          assert(KinesisOptions.all.contains(target), f.name)
          own.foreach(o => assert(o == target && translate.isDefined, s"${f.name} is ours: only its values differ"))
        case _ => assert(own.isEmpty, s"${f.name} is one of this connector's options")
      }
    }
  }
}
