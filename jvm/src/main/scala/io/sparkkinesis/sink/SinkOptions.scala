package io.sparkkinesis.sink

import io.sparkkinesis.aws.{AwsConnection, StreamRef}
import io.sparkkinesis.config.{KinesisOptions => O, ParsedOptions, Scope}
import io.sparkkinesis.errors.KinesisErrors

/** Service limits a writer keeps to, configurable for streams with larger record limits. */
final case class PutLimits(maxRecordsPerRequest: Int, maxRequestBytes: Long, maxRecordBytes: Long)

/** The sink's options, validated and typed on the driver when the write is defined. */
final case class SinkOptions(
    stream: StreamRef,
    connection: AwsConnection,
    limits: PutLimits,
    maxRetries: Int,
    maxInFlightRequests: Int)

object SinkOptions {

  def parse(options: java.util.Map[String, String]): SinkOptions = {
    val opts = ParsedOptions(options, Scope.Sink)
    val streams = StreamRef.parseList(opts.required(O.StreamName, "orders"))
    if (streams.size != 1)
      throw KinesisErrors.invalidOptionValue(O.StreamName.name, streams.mkString(","),
        "exactly one stream name or ARN for the sink")
    val limits = PutLimits(opts.getOrDefault(O.MaxRecordsPerRequest), opts.getOrDefault(O.MaxRequestSize),
      opts.getOrDefault(O.MaxRecordSize))
    if (limits.maxRecordBytes > limits.maxRequestBytes)
      throw KinesisErrors.conflictingOptions(
        s"Option 'maxRecordSize' (${limits.maxRecordBytes}) is larger than 'maxRequestSize' (${limits.maxRequestBytes}); " +
          "a record must fit in one request.")
    SinkOptions(streams.head, AwsConnection.fromOptions(opts, streams), limits,
      opts.getOrDefault(O.MaxRetries), opts.getOrDefault(O.MaxInFlightRequests))
  }
}
