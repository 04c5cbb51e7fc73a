package io.sparkkinesis.writer

import io.sparkkinesis.aws.{AwsConnection, Backoff, RetryPolicy, StreamRef}
import io.sparkkinesis.config.{Dialect, KinesisOptions => O, ParsedOptions, Scope}
import io.sparkkinesis.errors.KinesisErrors
import io.sparkkinesis.metrics.CloudWatchSettings

/** The service limits a writer keeps to when it writes to one stream. */
private[sparkkinesis] final case class PutLimits(maxRecordsPerRequest: Int, maxRequestBytes: Long, maxRecordBytes: Long)

/**
 * The sink's size options: each one set, or left to the limits of the stream written to. A stream takes records
 * up to its maximum record size (1 MiB unless raised, up to 10 MiB; [[StreamRecordLimit]]), and PutRecords calls of
 * up to 5 MiB, or 10 MiB once its records may be larger than 1 MiB.
 */
private[sparkkinesis] final case class SinkLimits(
    maxRecordsPerRequest: Int,
    maxRequestBytes: Option[Long],
    maxRecordBytes: Option[Long]) {

  /** The limits of writes to a stream whose records may be `streamRecordBytes` (asked only when needed). */
  def forStream(streamRecordBytes: => Long): PutLimits = {
    val record = maxRecordBytes.getOrElse(streamRecordBytes)
    val request = maxRequestBytes.getOrElse(
      if (record > SinkLimits.DefaultRecordBytes) SinkLimits.LargeRequestBytes else SinkLimits.DefaultRequestBytes)
    PutLimits(maxRecordsPerRequest, request, math.min(record, request))
  }
}

private[sparkkinesis] object SinkLimits {
  val DefaultRecordBytes: Long = 1024L * 1024
  val DefaultRequestBytes: Long = 5L * 1024 * 1024
  val LargeRequestBytes: Long = 10L * 1024 * 1024
}

/** The sink's options, validated and typed on the driver when the write is defined. */
private[sparkkinesis] final case class SinkOptions(
    stream: Option[StreamRef],
    connection: AwsConnection,
    limits: SinkLimits,
    retry: RetryPolicy,
    maxInFlightRequests: Int,
    perKeyOrdering: Boolean,
    partitionKeyColumn: Option[String],
    ignoreUnusedColumns: Boolean,
    dropOversizeRecords: Boolean,
    aggregationMaxBytes: Option[Long],
    maxRecordDelayMillis: Option[Long] = None,
    clientFactory: SinkClientFactory = SinkClientFactory.Shared,
    cloudWatch: Option[CloudWatchSettings] = None)

private[sparkkinesis] object SinkOptions {

  /** A record's retries start at about 100 ms and wait at most 5 s each. */
  val RetryBackoff: Backoff = Backoff(baseMillis = 100, capMillis = 5000)

  /**
   * Parses and checks the options. `hasStreamColumn` says whether the input has the format's stream column
   * (`stream` under `kinesis`; `aws-kinesis` has none: [[SinkSchema]]), which makes the `streamName` option a
   * fallback rather than a requirement; `dialect` is the format's, whose other names it also takes.
   */
  def parse(
      options: java.util.Map[String, String],
      hasStreamColumn: Boolean,
      dialect: Dialect = Dialect.Kinesis): SinkOptions = {
    val opts = ParsedOptions(options, Scope.Sink, dialect)
    val stream = opts.get(O.StreamName) match {
      case Some(text) =>
        val streams = StreamRef.parseList(text)
        if (streams.size != 1)
          throw KinesisErrors.invalidOptionValue(O.StreamName.name, text, "exactly one stream name or ARN for the sink")
        streams.headOption
      case None if hasStreamColumn => None
      case None => throw KinesisErrors.missingOption(O.StreamName.name, "orders")
    }
    val limits = SinkLimits(opts.getOrDefault(O.MaxRecordsPerRequest), opts.get(O.MaxRequestSize),
      opts.get(O.MaxRecordSize))
    for (record <- limits.maxRecordBytes; request <- limits.maxRequestBytes if record > request)
      throw KinesisErrors.conflictingOptions(
        s"Option 'maxRecordSize' ($record) is larger than 'maxRequestSize' ($request); a record must fit in one request.")
    val aggregation = opts.getOrDefault(O.Aggregation) match {
      case "kpl" =>
        // Unset, the stream's record limit bounds the aggregates when the writer learns it (KplRecordPacker).
        val max = opts.getOrDefault(O.AggregationMaxSize)
        for (record <- limits.maxRecordBytes if max > record)
          throw KinesisErrors.conflictingOptions(s"Option 'aggregationMaxSize' ($max) is larger than " +
            s"'maxRecordSize' ($record); an aggregated record is one Kinesis record.")
        Some(max)
      case _ =>
        if (opts.contains(O.AggregationMaxSize))
          throw KinesisErrors.conflictingOptions("Option 'aggregationMaxSize' applies only with 'aggregation' set " +
            "to 'kpl'; remove it or set aggregation=kpl.")
        None
    }
    val connection = AwsConnection.fromOptions(opts, stream.toSeq)
    SinkOptions(
      stream = stream,
      connection = connection,
      limits = limits,
      retry = RetryPolicy(opts.get(O.MaxRetries).getOrElse(Int.MaxValue), SinkOptions.RetryBackoff,
        Some(opts.getOrDefault(O.MaxRetryDuration))).on(connection),
      maxInFlightRequests = opts.getOrDefault(O.MaxInFlightRequests),
      perKeyOrdering = opts.getOrDefault(O.OrderingMode) == "perkey",
      partitionKeyColumn = opts.get(O.PartitionKeyColumn),
      ignoreUnusedColumns = opts.getOrDefault(O.UnusedColumns) == "ignore",
      dropOversizeRecords = opts.getOrDefault(O.OversizeRecordAction) == "drop",
      aggregationMaxBytes = aggregation,
      maxRecordDelayMillis = opts.get(O.MaxRecordDelay).map(_.toMillis),
      cloudWatch = CloudWatchSettings.parse(opts, connection))
  }
}
