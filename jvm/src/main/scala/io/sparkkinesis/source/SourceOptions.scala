package io.sparkkinesis.source

import io.sparkkinesis.aws.{AwsConnection, ConsumerSpec, DynamoDbStreams, StreamRef}
import io.sparkkinesis.config.{Dialect, KinesisOptions => O, ParsedOptions, Scope}
import io.sparkkinesis.errors.KinesisErrors
import io.sparkkinesis.fetching.{FetchSettings, ShardService}
import io.sparkkinesis.metrics.CloudWatchSettings
import io.sparkkinesis.offsets.StartPosition
import io.sparkkinesis.reader.KinesisSchema

/**
 * The source's options, validated and typed, built on the driver when the query is defined; `dialect` is the format
 * they were read in, which with `variantImages` (`imageColumnType=variant`) names the read's [[columns]].
 */
private[sparkkinesis] final case class SourceOptions(
    streams: Seq[StreamRef],
    connection: AwsConnection,
    initialPosition: Option[StartPosition],
    fetch: FetchSettings,
    shardsPerTask: Int,
    maxRecordsPerTrigger: Option[Long] = None,
    maxBytesPerTrigger: Option[Long] = None,
    shardDiscoveryMillis: Long = 10000L,
    shardStarts: ShardStartPositions = ShardStartPositions.Empty,
    consumer: Option[ConsumerSpec] = None,
    stallMillis: Long = 600000L,
    dialect: Dialect = Dialect.Kinesis,
    cloudWatch: Option[CloudWatchSettings] = None,
    variantImages: Boolean = false) {

  /** The read's columns. */
  def columns: KinesisSchema = KinesisSchema.of(dialect, variantImages)

  /** Whether the query reads with enhanced fan-out (`consumerMode=efo`). */
  def fanOut: Boolean = consumer.isDefined

  /** The streams by name, built once for the stream, its planner and its quiet watch. */
  lazy val streamsByName: Map[String, StreamRef] = streams.map(s => s.name -> s).toMap
}

private[sparkkinesis] object SourceOptions {

  /** Parses and checks a read's options; `dialect` is the format's, whose other names it also takes. */
  def parse(options: java.util.Map[String, String], dialect: Dialect = Dialect.Kinesis): SourceOptions = {
    val opts = ParsedOptions(options, Scope.Source, dialect)
    val dynamoDb = dialect == Dialect.DynamoDbStreams
    if (dynamoDb) DynamoDbSource.check(opts)
    else
      Seq(O.TableName, O.StreamArn, O.ImageColumnType).find(opts.contains).foreach { o =>
        throw KinesisErrors.conflictingOptions(s"Option '${o.name}' names a DynamoDB table's stream: read it with " +
          s"format '${Dialect.DynamoDbStreams.format}' (docs/dynamodb-streams.md), or remove it.")
      }
    // A table's stream is found on the driver when the query is defined; its ARN names it from then on.
    lazy val named = if (dynamoDb) Seq(DynamoDbSource.stream(opts)) else Nil
    val streams =
      if (dynamoDb) opts.get(O.StreamArn).map(a => Seq(DynamoDbStreams.parseArn(a))).getOrElse(named)
      else StreamRef.parseList(opts.required(O.StreamName, "orders"))
    val position = opts.get(O.InitialPosition).map { word =>
      if (word == "at_timestamp" && !opts.contains(O.InitialTimestamp))
        throw KinesisErrors.missingOption(O.InitialTimestamp.name, "2026-01-31T12:00:00Z")
      StartPosition.fromOption(word, opts.get(O.InitialTimestamp))
    }
    // Kinesis starts no read after its own clock (GetShardIterator refuses it): say so, naming the option.
    position.collect {
      case StartPosition.AtTimestamp(millis) if millis > System.currentTimeMillis() =>
        throw KinesisErrors.invalidOptionValue(O.InitialTimestamp.name, java.time.Instant.ofEpochMilli(millis).toString,
          s"a time that has passed (it is ${java.time.Instant.now()} here): Kinesis starts no read at a future time")
    }
    if (opts.contains(O.InitialTimestamp) && !position.exists(_.isInstanceOf[StartPosition.AtTimestamp]))
      throw KinesisErrors.conflictingOptions(
        "Option 'initialTimestamp' is only used with initialPosition=at_timestamp; set that too or remove it.")
    val connection = AwsConnection.fromOptions(opts, streams)
    SourceOptions(
      streams,
      connection,
      position,
      FetchSettings(opts.getOrDefault(O.MaxRecordsPerFetch), opts.getOrDefault(O.MinFetchPeriod).toMillis,
        opts.getOrDefault(O.IdleFetchPeriod).toMillis, opts.getOrDefault(O.MaxFetchRate),
        opts.getOrDefault(O.FetchBufferSize), opts.getOrDefault(O.FailOnDataLoss),
        dropOutOfRangeSubRecords = opts.getOrDefault(O.DropOutOfRangeSubRecords),
        service = if (dynamoDb) ShardService.DynamoDbStreams else ShardService.Kinesis),
      opts.getOrDefault(O.ShardsPerTask),
      opts.get(O.MaxRecordsPerTrigger),
      opts.get(O.MaxBytesPerTrigger),
      opts.getOrDefault(O.ShardDiscoveryInterval).toMillis,
      opts.get(O.InitialShardPositions).map(ShardStartPositions.parse(_, streams.map(_.name).toSet))
        .getOrElse(ShardStartPositions.Empty),
      consumer(opts, streams),
      opts.getOrDefault(O.StallTimeout).toMillis,
      dialect,
      CloudWatchSettings.parse(opts, connection),
      variantImages = opts.getOrDefault(O.ImageColumnType) == "variant")
  }

  private val ConsumerNamePattern = "[a-zA-Z0-9_.-]{1,128}".r
  private val ConsumerArnPattern =
    "arn:aws[a-z-]*:kinesis:[a-z0-9-]+:[0-9]{12}:stream/([a-zA-Z0-9_.-]+)/consumer/[a-zA-Z0-9_.-]+:[0-9]+".r

  /** The enhanced fan-out consumer the options ask for: None for `consumerMode=polling`. */
  private def consumer(opts: ParsedOptions, streams: Seq[StreamRef]): Option[ConsumerSpec] = {
    val efoOnly = Seq(O.ConsumerName, O.ConsumerNamePrefix, O.RequireConsumerDeregistration, O.RegisteredConsumerId,
      O.RegisteredConsumerIdType)
    if (opts.getOrDefault(O.ConsumerMode) == "polling") {
      efoOnly.find(opts.contains).foreach { o =>
        throw KinesisErrors.conflictingOptions(
          s"Option '${o.name}' is for enhanced fan-out: set consumerMode=efo too, or remove it.")
      }
      None
    } else opts.get(O.RegisteredConsumerId) match {
      case Some(id) =>
        Seq(O.ConsumerName, O.ConsumerNamePrefix, O.RequireConsumerDeregistration).find(opts.contains).foreach { o =>
          throw KinesisErrors.conflictingOptions(s"Option '${o.name}' is for a consumer the connector manages; " +
            "'registeredConsumerId' names one someone else manages. Keep one of them.")
        }
        if (opts.getOrDefault(O.RegisteredConsumerIdType) == "arn") {
          val stream = id match {
            case ConsumerArnPattern(s) => s
            case _ => throw KinesisErrors.invalidOptionValue(O.RegisteredConsumerId.name, id,
                "a consumer ARN such as arn:aws:kinesis:us-east-1:123456789012:stream/orders/consumer/etl:1700000000 " +
                  "(with registeredConsumerIdType=arn), or set registeredConsumerIdType=name")
          }
          if (streams.map(_.name) != Seq(stream))
            throw KinesisErrors.conflictingOptions(s"The consumer ARN in 'registeredConsumerId' belongs to stream " +
              s"'$stream', but 'streamName' names ${streams.map(r => s"'${r.name}'").mkString(", ")}. A consumer ARN " +
              "serves one stream: read that stream alone, or give the consumer's name with registeredConsumerIdType=name.")
          Some(ConsumerSpec.Registered(id, byArn = true))
        } else Some(ConsumerSpec.Registered(validName(O.RegisteredConsumerId.name, id), byArn = false))
      case None =>
        if (opts.contains(O.RegisteredConsumerIdType))
          throw KinesisErrors.conflictingOptions(
            "Option 'registeredConsumerIdType' says how to read 'registeredConsumerId'; set that too, or remove it.")
        // A prefix goes before the consumer's name, given or default (about 30 characters), within 128 in all.
        val prefix = opts.get(O.ConsumerNamePrefix).map { p =>
          if (p.length > 98 || !ConsumerNamePattern.pattern.matcher(p).matches())
            throw KinesisErrors.invalidOptionValue(O.ConsumerNamePrefix.name, p,
              "1 to 98 letters, digits, '_', '.' or '-', such as databricks_")
          p
        }.getOrElse("")
        Some(ConsumerSpec.Managed(opts.get(O.ConsumerName).map(n => validName(O.ConsumerName.name, prefix + n)),
            opts.getOrDefault(O.RequireConsumerDeregistration), prefix))
    }
  }

  private def validName(option: String, name: String): String = name match {
    case ConsumerNamePattern() => name
    case _ => throw KinesisErrors.invalidOptionValue(option, name,
        "a consumer name of 1 to 128 letters, digits, '_', '.' or '-', such as orders-etl")
  }
}
