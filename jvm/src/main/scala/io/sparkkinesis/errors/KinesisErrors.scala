package io.sparkkinesis.errors

/** Thrown for input the user can fix (options, schema): reported when the query is defined or starts. */
final class KinesisOptionException(val condition: String, message: String)
  extends IllegalArgumentException(s"[$condition] $message")

/** Thrown for failures while a query runs (service errors, lost data, retry budgets spent). */
final class KinesisException(val condition: String, message: String, cause: Throwable = null)
  extends RuntimeException(s"[$condition] $message", cause)

/**
 * The one place that builds every user-facing error. Each message names the option, column or stream
 * concerned and says what to do. The bracketed condition name at the start of each message is stable:
 * the Python package maps it to an exception class. Messages never contain credential values.
 */
private[sparkkinesis] object KinesisErrors {

  def unknownOption(name: String, suggestions: Seq[String], scopeHint: String): KinesisOptionException = {
    val hint = suggestions match {
      case Seq() => ""
      case Seq(one) => s" Did you mean '$one'?"
      case many => s" Did you mean one of ${many.map(s => s"'$s'").mkString(", ")}?"
    }
    new KinesisOptionException("KINESIS_UNKNOWN_OPTION",
      s"Unknown option '$name' for the Kinesis $scopeHint.$hint See docs/options.md for every option.")
  }

  def optionNotForScope(name: String, validFor: String, usedFor: String): KinesisOptionException =
    new KinesisOptionException("KINESIS_OPTION_NOT_APPLICABLE",
      s"Option '$name' applies to the Kinesis $validFor only, not to the $usedFor. Remove it.")

  def missingOption(name: String, example: String): KinesisOptionException =
    new KinesisOptionException("KINESIS_MISSING_OPTION",
      s"""Option '$name' is required. Example: .option("$name", "$example")""")

  def invalidOptionValue(
      name: String,
      value: String,
      expected: String,
      secret: Boolean = false): KinesisOptionException = {
    val shown = if (secret) "(hidden)" else s"'$value'"
    new KinesisOptionException("KINESIS_INVALID_OPTION_VALUE",
      s"Option '$name' has the value $shown, but it must be $expected.")
  }

  def conflictingOptions(message: String): KinesisOptionException =
    new KinesisOptionException("KINESIS_CONFLICTING_OPTIONS", message)

  /** An option real-time mode cannot honour (its batches have no planned end to limit). */
  def notInRealTimeMode(name: String, why: String): KinesisOptionException =
    new KinesisOptionException("KINESIS_OPTION_NOT_IN_REAL_TIME_MODE",
      s"Option '$name' does not apply in real-time mode: $why. Remove it, or run the query with a processing-time " +
        "trigger. docs/source.md (\"Real-time mode\") lists the options of this mode.")

  def invalidStreamName(name: String): KinesisOptionException =
    new KinesisOptionException("KINESIS_INVALID_STREAM_NAME",
      s"Stream '$name' in option 'streamName' is neither a stream name (1-128 characters of a-z, A-Z, 0-9, '_', '.', '-') " +
        "nor a stream ARN (arn:aws:kinesis:<region>:<account>:stream/<name>).")

  def userSchemaNotAllowed(): KinesisOptionException =
    new KinesisOptionException("KINESIS_USER_SCHEMA_NOT_ALLOWED",
      "The Kinesis source has a fixed schema (data, streamName, shardId, partitionKey, sequenceNumber, " +
        "subSequenceNumber, approximateArrivalTimestamp); remove .schema(...) and cast or parse 'data' instead.")

  def invalidSinkSchema(problem: String, expected: String): KinesisOptionException =
    new KinesisOptionException("KINESIS_INVALID_SINK_SCHEMA", s"$problem The Kinesis sink expects: $expected")

  def recordTooLarge(position: String, size: Long, limit: Long): KinesisException =
    new KinesisException("KINESIS_RECORD_TOO_LARGE",
      s"The record at $position is $size bytes (partition key plus data), over the limit of $limit bytes. " +
        "Make it smaller, or raise 'maxRecordSize' if the stream accepts larger records.")

  def streamNotFound(stream: String, cause: Throwable): KinesisException =
    new KinesisException("KINESIS_STREAM_NOT_FOUND",
      s"Stream '$stream' does not exist (or is not visible with these credentials and region). " +
        "Check 'streamName', 'region' and 'endpointUrl'.", cause)

  def accessDenied(stream: String, operation: String, cause: Throwable): KinesisException =
    new KinesisException("KINESIS_ACCESS_DENIED",
      s"$operation on stream '$stream' was denied. Check the credentials and that their policy allows " +
        s"kinesis:$operation (see docs/credentials.md).", cause)

  def noCredentials(cause: Throwable): KinesisException =
    new KinesisException("KINESIS_NO_CREDENTIALS",
      "No AWS credentials were found for Kinesis. Set 'awsAccessKeyId' and 'awsSecretKey', 'awsProfile' or " +
        "'roleArn', or give the driver and every executor credentials the SDK's default chain finds " +
        "(AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, ~/.aws/credentials, an instance or container role); see " +
        s"docs/credentials.md. The SDK said: ${safeMessage(cause).take(600)}", cause)

  def retriesExhausted(what: String, attempts: Int, errorCodes: Iterable[String], cause: Throwable): KinesisException =
    new KinesisException("KINESIS_RETRIES_EXHAUSTED",
      s"$what failed after $attempts attempts; error codes seen: ${errorCodes.toSeq.distinct.sorted.mkString(", ")}; " +
        s"last error: ${safeMessage(cause).take(300)}. " +
        "If the shard is throttled, other consumers share its read limit: reduce them, raise 'minFetchPeriod', or " +
        "add shards; for connection errors, check that 'endpointUrl' (and 'stsEndpointUrl' with 'roleArn') is " +
        "reachable.", cause)

  /** No connection could be opened to `target` (an endpoint and its region) that has never answered. */
  def endpointUnreachable(
      target: String,
      what: String,
      attempts: Int,
      seconds: Double,
      cause: Throwable): KinesisException =
    new KinesisException("KINESIS_ENDPOINT_UNREACHABLE",
      f"Cannot connect to $target for $what: ${safeMessage(rootCause(cause)).take(300)} ($attempts attempts in " +
        f"$seconds%.1f s). Check 'region' (a region such as eu-west-1) and 'endpointUrl', and, with 'roleArn', " +
        "'stsEndpointUrl'; and that the driver and every executor can reach the endpoint (proxy, firewall, VPC " +
        "endpoint). Once an endpoint has answered, connection failures are retried like throttling.", cause)

  private def rootCause(t: Throwable): Throwable =
    Iterator.iterate(t)(_.getCause).takeWhile(_ != null).take(10).toSeq.last

  def serviceError(what: String, stream: String, cause: Throwable): KinesisException =
    new KinesisException("KINESIS_SERVICE_ERROR", s"$what on stream '$stream' failed: ${safeMessage(cause)}", cause)

  /** An offset that cannot be read; `where` names the file it came from (or the offset log). */
  def badOffset(where: String, json: String, why: String, example: String): KinesisException =
    new KinesisException("KINESIS_INVALID_OFFSET",
      s"Cannot read the Kinesis offset in $where: $why. The offset: ${json.take(300)}. A valid offset looks like: " +
        s"$example. The checkpoint was changed by hand or by another program; restore it, or start the query " +
        "with a new checkpoint location.")

  /** A checkpoint that read streams the query's `streamName` no longer names. */
  def streamsChanged(removed: Seq[String], named: Seq[String]): KinesisException =
    new KinesisException("KINESIS_STREAMS_CHANGED",
      s"This query's checkpoint has read ${removed.map(s => s"'$s'").mkString(", ")}, which option 'streamName' no " +
        s"longer names (it names ${named.map(s => s"'$s'").mkString(", ")}). A checkpoint keeps the positions of " +
        "every stream it read: put those streams back into 'streamName' to go on, or start the query with a new " +
        "checkpoint location to read only the streams named now. (Adding streams is fine: a stream new to the " +
        "checkpoint starts at 'initialPosition'.)")

  def dataLoss(shard: String, detail: String): KinesisException =
    new KinesisException("KINESIS_DATA_LOSS",
      s"Records of $shard can no longer be read: $detail. They were probably trimmed by the stream's retention " +
        "period. Set failOnDataLoss=false to continue from the oldest record still available (the loss is logged " +
        "and counted in the dataLoss metric).")

  /** The stream has as many enhanced fan-out consumers as the service allows. */
  def consumerLimit(stream: String, consumer: String, cause: Throwable): KinesisException =
    new KinesisException("KINESIS_CONSUMER_LIMIT",
      s"Cannot register the enhanced fan-out consumer '$consumer' on stream '$stream': the stream has the most " +
        "consumers it may have (20 by default). Deregister consumers no query uses (`aws kinesis " +
        "list-stream-consumers` lists them), share one between queries with 'registeredConsumerId', or read with " +
        s"consumerMode=polling. The service said: ${safeMessage(cause).take(300)}", cause)

  /** A consumer named by 'registeredConsumerId' that the service does not know (or one deleted under a query). */
  def consumerNotFound(consumer: String, stream: String, cause: Throwable): KinesisException =
    new KinesisException("KINESIS_CONSUMER_NOT_FOUND",
      s"The enhanced fan-out consumer $consumer of stream '$stream' does not exist. Check 'registeredConsumerId' " +
        "and 'registeredConsumerIdType' (name or arn), or leave them out to let the connector register a consumer " +
        "of its own; if the consumer was deregistered while the query ran, restart the query.", cause)

  /** A consumer that did not become ACTIVE in time (registering, or one still being deregistered). */
  def consumerNotActive(consumer: String, stream: String, status: String, seconds: Long): KinesisException =
    new KinesisException("KINESIS_CONSUMER_NOT_ACTIVE",
      s"The enhanced fan-out consumer '$consumer' of stream '$stream' was still $status after $seconds s. " +
        "Check it with `aws kinesis describe-stream-consumer`, then start the query again.")

  /**
   * A Trigger.AvailableNow or Trigger.Once query waited `seconds` for `shards` (each with what its reader last said)
   * without any shard making progress: it would otherwise never end.
   */
  def readStalled(trigger: String, seconds: Long, shards: Seq[String]): KinesisException =
    new KinesisException("KINESIS_READ_STALLED",
      s"The $trigger query made no progress for $seconds s (option 'stallTimeout') while these shards still had " +
        s"records to read before its cutoff: ${shards.mkString("; ")}. Nothing was skipped: a restart goes on from " +
        "the last committed batch. Look in the executor logs for why the shards cannot be read (throttling, a " +
        "fan-out subscription that delivers nothing, an endpoint that stopped answering); with consumerMode=efo, " +
        "consumerMode=polling reads the same records by GetRecords; raise 'stallTimeout' if the shards are only slow.")

  def rangeUnavailable(shard: String, detail: String): KinesisException =
    new KinesisException("KINESIS_RANGE_UNAVAILABLE", s"Cannot re-read the planned records of $shard: $detail.")

  /** An SDK exception's message, which never carries credentials (the SDK signs, it does not echo keys). */
  def safeMessage(t: Throwable): String =
    Option(t).map(e => s"${e.getClass.getSimpleName}: ${e.getMessage}").getOrElse("")

  // ---- sink ----

  /** A row the sink cannot turn into a record (null data, bad partition key, hash key or stream name). */
  def invalidSinkRow(position: String, problem: String, fix: String): KinesisException =
    new KinesisException("KINESIS_INVALID_SINK_ROW", s"The row at $position $problem. $fix")

  /** PutRecords refused a record with an error code that retrying cannot fix. */
  def recordRejected(position: String, stream: String, errorCode: String, errorMessage: String): KinesisException =
    new KinesisException("KINESIS_RECORD_REJECTED",
      s"Kinesis rejected the record at $position for stream '$stream' with $errorCode: $errorMessage. " +
        "Retrying cannot fix this error; check the stream, its encryption key and the record.")

  /** One record of the sink kept failing until its retry budget was spent. */
  def putRetriesExhausted(
      position: String,
      stream: String,
      failures: Int,
      errorCodes: Iterable[String],
      lastError: Option[Throwable]): KinesisException =
    new KinesisException("KINESIS_RETRIES_EXHAUSTED",
      s"The record at $position for stream '$stream' failed $failures times; error codes seen: " +
        s"${errorCodes.mkString(", ")}${lastError.map(e => s"; last error: ${safeMessage(e)}").getOrElse("")}. " +
        "Raise 'maxRetries'/'maxRetryDuration', or add shards if the stream is throttling.", lastError.orNull)

  /** A stream ARN whose region differs from the region the sink writes to. */
  def streamInOtherRegion(stream: String, streamRegion: String, region: String): KinesisException =
    new KinesisException("KINESIS_INVALID_SINK_ROW",
      s"Stream '$stream' is in region '$streamRegion' but the sink writes to region '$region'; one write " +
        "targets one region (set 'region', or write to each region separately).")

  /** Another connector's option that asks for what this one cannot do; `instead` says what to use. */
  def unsupportedOption(name: String, origin: String, instead: String): KinesisOptionException =
    new KinesisOptionException("KINESIS_UNSUPPORTED_OPTION",
      s"Option '$name' of the $origin connector is not supported here: $instead. See docs/migrating.md.")

  /** Another connector's option name given under the other format (an awslabs name under format("kinesis"), ...). */
  def optionOfOtherFormat(name: String, origin: String, format: String, usedFormat: String): KinesisOptionException =
    new KinesisOptionException("KINESIS_UNKNOWN_OPTION",
      s"""Option '$name' is the $origin connector's name, taken under format("$format"), not under """ +
        s"""format("$usedFormat"). Use format("$format"), or this connector's name for it (docs/migrating.md).""")

  /** Two names of the same option (this connector's and another's, or two others') given together. */
  def optionGivenTwice(first: String, second: String, option: String): KinesisOptionException =
    new KinesisOptionException("KINESIS_CONFLICTING_OPTIONS",
      s"Options '$first' and '$second' both set '$option'; give it once.")

  /**
   * A checkpoint of the awslabs connector whose last batch's end cannot be found: its shard positions are kept
   * beside the offset log (`missing`), not in it.
   */
  def foreignCheckpointUnreadable(checkpoint: String, batch: Long, missing: String): KinesisException =
    new KinesisException("KINESIS_FOREIGN_CHECKPOINT",
      s"The checkpoint $checkpoint was written by the awslabs connector, which keeps where each batch ended beside " +
        s"Spark's offset log; where batch $batch ended is not at $missing (kept in DynamoDB with " +
        "kinesis.metadataCommitterType=DYNAMODB, in kinesis.metadataPath, or deleted). To go on without reading a " +
        "record twice: put the batch's shard files back under that folder, or start the query with a new " +
        "checkpoint location and option 'initialShardPositions' set to each shard's last sequence number read; " +
        "or, accepting duplicates, initialPosition=at_timestamp with the time of the last committed batch " +
        "(docs/migrating.md, \"From awslabs\").")
}
