package io.sparkkinesis.source

import io.sparkkinesis.aws.{AwsConnection, ConsumerSpec, StreamRef}
import io.sparkkinesis.config.{KinesisOptions => O, ParsedOptions, Scope}
import io.sparkkinesis.errors.KinesisErrors
import io.sparkkinesis.fetching.FetchSettings
import io.sparkkinesis.offsets.StartPosition

/** The source's options, validated and typed, built on the driver when the query is defined. */
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
    consumer: Option[ConsumerSpec] = None) {

  /** Whether the query reads with enhanced fan-out (`consumerMode=efo`). */
  def fanOut: Boolean = consumer.isDefined

  /** The streams by name, built once for the stream, its planner and its quiet watch. */
  lazy val streamsByName: Map[String, StreamRef] = streams.map(s => s.name -> s).toMap
}

private[sparkkinesis] object SourceOptions {

  def parse(options: java.util.Map[String, String]): SourceOptions = {
    val opts = ParsedOptions(options, Scope.Source)
    val streams = StreamRef.parseList(opts.required(O.StreamName, "orders"))
    val position = opts.get(O.InitialPosition).map { word =>
      if (word == "at_timestamp" && !opts.contains(O.InitialTimestamp))
        throw KinesisErrors.missingOption(O.InitialTimestamp.name, "2026-01-31T12:00:00Z")
      StartPosition.fromOption(word, opts.get(O.InitialTimestamp))
    }
    if (opts.contains(O.InitialTimestamp) && !position.exists(_.isInstanceOf[StartPosition.AtTimestamp]))
      throw KinesisErrors.conflictingOptions(
        "Option 'initialTimestamp' is only used with initialPosition=at_timestamp; set that too or remove it.")
    SourceOptions(
      streams,
      AwsConnection.fromOptions(opts, streams),
      position,
      FetchSettings(opts.getOrDefault(O.MaxRecordsPerFetch), opts.getOrDefault(O.MinFetchPeriod).toMillis,
        opts.getOrDefault(O.IdleFetchPeriod).toMillis, opts.getOrDefault(O.MaxFetchRate),
        opts.getOrDefault(O.FetchBufferSize), opts.getOrDefault(O.FailOnDataLoss)),
      opts.getOrDefault(O.ShardsPerTask),
      opts.get(O.MaxRecordsPerTrigger),
      opts.get(O.MaxBytesPerTrigger),
      opts.getOrDefault(O.ShardDiscoveryInterval).toMillis,
      opts.get(O.InitialShardPositions).map(ShardStartPositions.parse(_, streams.map(_.name).toSet))
        .getOrElse(ShardStartPositions.Empty))
  }
}
