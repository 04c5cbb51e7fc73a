package io.sparkkinesis.errors

/**
 * The one place that builds every user-facing error. Each error is a Spark error condition: its name, message
 * template and SQLSTATE are in `error/kinesis-error-conditions.json` ([[ErrorConditions]]), and each method here
 * gives the template's parameters. Each message names the option, column or stream concerned and says what to do,
 * and starts with the bracketed condition name, which is stable: the Python package maps it to an exception class.
 * Parameters, and so messages, never contain credential values (`ErrorConditionsSuite` checks). The connector's
 * `[KINESIS_*]` warnings, which are logged and never thrown, are built here too (at the end).
 */
private[sparkkinesis] object KinesisErrors {

  def unknownOption(name: String, suggestions: Seq[String], scopeHint: String): KinesisOptionException = {
    val hint = suggestions match {
      case Seq() => ""
      case Seq(one) => s" Did you mean '$one'?"
      case many => s" Did you mean one of ${many.map(s => s"'$s'").mkString(", ")}?"
    }
    new KinesisOptionException("KINESIS_UNKNOWN_OPTION",
      Map("option" -> name, "scope" -> scopeHint, "suggestion" -> hint))
  }

  def optionNotForScope(name: String, validFor: String, usedFor: String): KinesisOptionException =
    new KinesisOptionException("KINESIS_OPTION_NOT_APPLICABLE",
      Map("option" -> name, "validFor" -> validFor, "usedFor" -> usedFor))

  def missingOption(name: String, example: String): KinesisOptionException =
    new KinesisOptionException("KINESIS_MISSING_OPTION", Map("option" -> name, "example" -> example))

  def invalidOptionValue(
      name: String,
      value: String,
      expected: String,
      secret: Boolean = false): KinesisOptionException = {
    val shown = if (secret) "(hidden)" else s"'$value'"
    new KinesisOptionException("KINESIS_INVALID_OPTION_VALUE",
      Map("option" -> name, "value" -> shown, "expected" -> expected))
  }

  def conflictingOptions(message: String): KinesisOptionException =
    new KinesisOptionException("KINESIS_CONFLICTING_OPTIONS", Map("conflict" -> message))

  /** An option real-time mode cannot honour (its batches have no planned end to limit). */
  def notInRealTimeMode(name: String, why: String): KinesisOptionException =
    new KinesisOptionException("KINESIS_OPTION_NOT_IN_REAL_TIME_MODE", Map("option" -> name, "reason" -> why))

  def invalidStreamName(name: String): KinesisOptionException =
    new KinesisOptionException("KINESIS_INVALID_STREAM_NAME",
      Map("stream" -> name, "arnForm" -> "arn:aws:kinesis:<region>:<account>:stream/<name>"))

  /** A schema given to a read of `format`, whose fixed `columns` are named in the message. */
  def userSchemaNotAllowed(format: String, columns: Seq[String]): KinesisOptionException =
    new KinesisOptionException("KINESIS_USER_SCHEMA_NOT_ALLOWED",
      Map("format" -> format, "columns" -> columns.mkString(", ")))

  def invalidSinkSchema(problem: String, expected: String): KinesisOptionException =
    new KinesisOptionException("KINESIS_INVALID_SINK_SCHEMA", Map("problem" -> problem, "expected" -> expected))

  def recordTooLarge(position: String, size: Long, limit: Long): KinesisException =
    new KinesisException("KINESIS_RECORD_TOO_LARGE",
      Map("position" -> position, "size" -> size.toString, "limit" -> limit.toString))

  def streamNotFound(stream: String, cause: Throwable): KinesisException =
    new KinesisException(Condition.StreamNotFound.name, Map("stream" -> stream), cause)

  def accessDenied(stream: String, operation: String, cause: Throwable): KinesisException =
    new KinesisException("KINESIS_ACCESS_DENIED", Map("operation" -> operation, "stream" -> stream), cause)

  def noCredentials(cause: Throwable): KinesisException =
    new KinesisException("KINESIS_NO_CREDENTIALS", Map("sdkMessage" -> safeMessage(cause).take(600)), cause)

  def retriesExhausted(what: String, attempts: Int, errorCodes: Iterable[String], cause: Throwable): KinesisException =
    new KinesisException(Condition.RetriesExhausted.name,
      Map(
        "failure" -> s"$what failed after $attempts attempts",
        "errorCodes" -> errorCodes.toSeq.distinct.sorted.mkString(", "),
        "lastError" -> safeMessage(cause).take(300),
        "advice" -> ("If the shard is throttled, other consumers share its read limit: reduce them, raise " +
          "'minFetchPeriod', or add shards; for connection errors, check that 'endpointUrl' (and 'stsEndpointUrl' " +
          "with 'roleArn') is reachable.")),
      cause)

  /** No connection could be opened to `target` (an endpoint and its region) that has never answered. */
  def endpointUnreachable(
      target: String,
      what: String,
      attempts: Int,
      seconds: Double,
      cause: Throwable): KinesisException =
    new KinesisException(Condition.EndpointUnreachable.name,
      Map(
        "target" -> target,
        "operation" -> what,
        "connectionError" -> safeMessage(rootCause(cause)).take(300),
        "attempts" -> attempts.toString,
        "seconds" -> f"$seconds%.1f"),
      cause)

  /**
   * The AWS SDK resolves no endpoint of `service` for `region` with these variants: the region (or the variant its
   * partition lacks) is the value to change, or the service's endpoint URL option set instead.
   */
  def endpointUnresolved(
      service: String,
      region: String,
      fips: Boolean,
      dualstack: Boolean,
      endpointOption: String,
      reason: String): KinesisOptionException = {
    val variant = (if (fips) Seq("FIPS") else Nil) ++ (if (dualstack) Seq("dual-stack") else Nil)
    val which = if (variant.isEmpty) "" else variant.mkString(" ", " and ", "")
    val flags = (if (fips) Seq("'useFipsEndpoint'") else Nil) ++ (if (dualstack) Seq("'useDualstackEndpoint'") else Nil)
    invalidOptionValue("region", region,
      s"a region where the AWS SDK resolves a$which $service endpoint (it says: $reason); fix 'region'" +
        (if (flags.isEmpty) "" else s", turn off ${flags.mkString(" or ")} (or the SDK's own setting)") +
        s", or set '$endpointOption' to the endpoint's URL")
  }

  private def rootCause(t: Throwable): Throwable =
    Iterator.iterate(t)(_.getCause).takeWhile(_ != null).take(10).toSeq.last

  def serviceError(what: String, stream: String, cause: Throwable): KinesisException =
    new KinesisException("KINESIS_SERVICE_ERROR",
      Map("operation" -> what, "stream" -> stream, "serviceMessage" -> safeMessage(cause)), cause)

  /** An offset that cannot be read; `where` names the file it came from (or the offset log). */
  def badOffset(where: String, json: String, why: String, example: String): KinesisException =
    new KinesisException("KINESIS_INVALID_OFFSET",
      Map("location" -> where, "reason" -> why, "offset" -> json.take(300), "example" -> example))

  /** A checkpoint that read streams the query's `streamName` no longer names. */
  def streamsChanged(removed: Seq[String], named: Seq[String]): KinesisException =
    new KinesisException("KINESIS_STREAMS_CHANGED",
      Map("removed" -> quoted(removed), "named" -> quoted(named)))

  private def quoted(names: Seq[String]): String = names.map(s => s"'$s'").mkString(", ")

  def dataLoss(shard: String, detail: String): KinesisException =
    new KinesisException("KINESIS_DATA_LOSS", Map("shard" -> shard, "detail" -> detail))

  /** The stream has as many enhanced fan-out consumers as the service allows. */
  def consumerLimit(stream: String, consumer: String, cause: Throwable): KinesisException =
    new KinesisException("KINESIS_CONSUMER_LIMIT",
      Map("consumer" -> consumer, "stream" -> stream, "serviceMessage" -> safeMessage(cause).take(300)), cause)

  /** A consumer named by 'registeredConsumerId' that the service does not know (or one deleted under a query). */
  def consumerNotFound(consumer: String, stream: String, cause: Throwable): KinesisException =
    new KinesisException("KINESIS_CONSUMER_NOT_FOUND", Map("consumer" -> consumer, "stream" -> stream), cause)

  /** A consumer that did not become ACTIVE in time (registering, or one still being deregistered). */
  def consumerNotActive(consumer: String, stream: String, status: String, seconds: Long): KinesisException =
    new KinesisException("KINESIS_CONSUMER_NOT_ACTIVE",
      Map("consumer" -> consumer, "stream" -> stream, "status" -> status, "seconds" -> seconds.toString))

  /** A statement on a table of a Kinesis catalog that would change or delete its stream, which the catalog forbids. */
  def catalogChangeNotAllowed(change: String, stream: String, catalog: String, how: String): KinesisOptionException =
    new KinesisOptionException("KINESIS_CATALOG_CHANGE_NOT_ALLOWED",
      Map("change" -> change, "stream" -> stream, "catalog" -> catalog, "how" -> how))

  /** A table property of `CREATE TABLE` or `ALTER TABLE` on a Kinesis catalog that it cannot take. */
  def invalidTableProperty(property: String, problem: String, expected: String): KinesisOptionException =
    new KinesisOptionException("KINESIS_INVALID_TABLE_PROPERTY",
      Map("property" -> property, "problem" -> problem, "expected" -> expected))

  /** A stream a statement created or changed that did not become ACTIVE in time. */
  def streamNotActive(stream: String, status: String, seconds: Long): KinesisException =
    new KinesisException("KINESIS_STREAM_NOT_ACTIVE",
      Map("stream" -> stream, "status" -> status, "seconds" -> seconds.toString))

  /**
   * A Trigger.AvailableNow or Trigger.Once query waited `seconds` for `shards` (each with what its reader last said)
   * without any shard making progress: it would otherwise never end.
   */
  def readStalled(trigger: String, seconds: Long, shards: Seq[String]): KinesisException =
    new KinesisException("KINESIS_READ_STALLED",
      Map("trigger" -> trigger, "seconds" -> seconds.toString, "shards" -> shards.mkString("; ")))

  def rangeUnavailable(shard: String, detail: String): KinesisException =
    new KinesisException("KINESIS_RANGE_UNAVAILABLE", Map("shard" -> shard, "detail" -> detail))

  /** An SDK exception's message, which never carries credentials (the SDK signs, it does not echo keys). */
  def safeMessage(t: Throwable): String =
    Option(t).map(e => s"${e.getClass.getSimpleName}: ${e.getMessage}").getOrElse("")

  // ---- sink ----

  /** A row the sink cannot turn into a record (null data, bad partition key, hash key or stream name). */
  def invalidSinkRow(position: String, problem: String, fix: String): KinesisException =
    new KinesisException("KINESIS_INVALID_SINK_ROW", Map("position" -> position, "problem" -> problem, "fix" -> fix))

  /** PutRecords refused a record with an error code that retrying cannot fix. */
  def recordRejected(position: String, stream: String, errorCode: String, errorMessage: String): KinesisException =
    new KinesisException("KINESIS_RECORD_REJECTED",
      Map("position" -> position, "stream" -> stream, "errorCode" -> errorCode, "errorMessage" -> errorMessage))

  /**
   * With `aggregation=kpl`: an aggregate landed in `landedIn`, and every listing of the stream within the sink's retry
   * budget still did not show that shard (or still showed `packedFor` open).
   */
  def shardListingBehind(
      stream: String,
      landedIn: String,
      packedFor: String,
      listings: Int,
      millis: Long): KinesisException =
    new KinesisException("KINESIS_SHARD_LISTING_BEHIND",
      Map("stream" -> stream, "landedIn" -> landedIn, "packedFor" -> packedFor, "listings" -> listings.toString,
        "millis" -> millis.toString))

  /** One record of the sink kept failing until its retry budget was spent. */
  def putRetriesExhausted(
      position: String,
      stream: String,
      failures: Int,
      errorCodes: Iterable[String],
      lastError: Option[Throwable]): KinesisException =
    new KinesisException(Condition.RetriesExhausted.name,
      Map(
        "failure" -> s"The record at $position for stream '$stream' failed $failures times",
        "errorCodes" -> errorCodes.mkString(", "),
        "lastError" -> lastError.map(safeMessage).getOrElse("none (every failure was a record's error code)"),
        "advice" -> "Raise 'maxRetries'/'maxRetryDuration', or add shards if the stream is throttling."),
      lastError.orNull)

  /** A row whose `streamName` is an ARN in another region than the one the sink writes to. */
  def streamInOtherRegion(position: String, stream: String, streamRegion: String, region: String): KinesisException =
    invalidSinkRow(position,
      s"names stream '$stream', which is in region '$streamRegion' but the sink writes to " +
        s"region '$region'", "One write targets one region: set 'region', or write to each region separately.")

  /** Another connector's option that asks for what this one cannot do; `instead` says what to use. */
  def unsupportedOption(name: String, origin: String, instead: String): KinesisOptionException =
    new KinesisOptionException("KINESIS_UNSUPPORTED_OPTION",
      Map("option" -> name, "origin" -> origin, "instead" -> instead))

  /** Another connector's option name given under the other format (an awslabs name under format("kinesis"), ...). */
  def optionOfOtherFormat(name: String, origin: String, format: String, usedFormat: String): KinesisOptionException =
    new KinesisOptionException("KINESIS_UNKNOWN_OPTION",
      Map("option" -> name, "scope" -> s"""source or sink under format("$usedFormat")""",
        "suggestion" -> (s""" It is the $origin connector's name, taken under format("$format"): use that """ +
          "format, or this connector's name for it (docs/migrating.md).")))

  /** Two names of the same option (this connector's and another's, or two others') given together. */
  def optionGivenTwice(first: String, second: String, option: String): KinesisOptionException =
    conflictingOptions(s"Options '$first' and '$second' both set '$option'; give it once.")

  /**
   * A checkpoint of the awslabs connector whose last batch's end cannot be found: its shard positions are kept
   * beside the offset log (`missing`), not in it.
   */
  def foreignCheckpointUnreadable(checkpoint: String, batch: Long, missing: String): KinesisException =
    new KinesisException("KINESIS_FOREIGN_CHECKPOINT",
      Map("checkpoint" -> checkpoint, "batch" -> batch.toString, "missing" -> missing))

  /**
   * A Glue Schema Registry call that retrying cannot fix: the advice fits what the service said (`denied`: it refused
   * the credentials or their permissions) and what was asked for (`recordVersionId`: the schema version id a
   * record's header carries, which no option chooses).
   */
  def schemaRegistryError(
      operation: String,
      subject: String,
      errorCode: String,
      serviceMessage: String,
      region: String,
      denied: Boolean,
      cause: Throwable,
      recordVersionId: Option[String] = None): KinesisException = {
    val advice = (errorCode, recordVersionId) match {
      case _ if denied =>
        s"Check the credentials and that their policy allows glue:$operation (docs/schema-registry.md, Permissions)."
      case ("EntityNotFoundException", Some(id)) =>
        s"The record's header carries schema version id $id, which the registry reached here does not have: the " +
          "record was written with a registry in another region or account. Find which registry its producer " +
          "used, and point 'region' (or 'registryEndpointUrl') and the credentials at it ('schemaName' and " +
          "'schemaVersionNumber' choose the reader schema, not this version)."
      case ("EntityNotFoundException", None) =>
        "Check 'registryName', 'schemaName' and 'schemaVersionNumber', and that 'region' (or 'registryEndpointUrl') " +
          "is the registry's."
      case _ => "Check the schema registry options (docs/schema-registry.md)."
    }
    new KinesisException("KINESIS_SCHEMA_REGISTRY_ERROR",
      Map("operation" -> operation, "subject" -> subject,
        "region" -> region, "errorCode" -> errorCode, "serviceMessage" -> serviceMessage.take(600), "advice" -> advice),
      cause)
  }

  /** A payload `from_glue_schema_registry` cannot decode, with `mode=failfast`. */
  def schemaDecodeFailed(position: String, schemaVersionId: String, problem: String, fix: String): KinesisException =
    new KinesisException("KINESIS_SCHEMA_DECODE_FAILED",
      Map("position" -> position, "schemaVersionId" -> schemaVersionId, "problem" -> problem, "fix" -> fix))

  /** An item `from_dynamodb_json` cannot read into its schema: `what` is the item or one of its attributes. */
  def dynamoDbJsonUnreadable(position: String, what: String, problem: String): KinesisException =
    new KinesisException("KINESIS_DYNAMODB_JSON_UNREADABLE",
      Map("position" -> position, "what" -> what, "problem" -> problem))

  /**
   * `format("dynamodb-streams")` given a table with no enabled stream (or no table of that name where the query
   * looks), or a stream ARN of a disabled stream: `how` says how to enable one.
   */
  def dynamoDbStreamNotEnabled(table: String, found: String, how: String): KinesisException =
    new KinesisException("KINESIS_DYNAMODB_STREAM_NOT_ENABLED", Map("table" -> table, "found" -> found, "how" -> how))

  /** A value `to_glue_schema_registry` cannot encode with its schema. */
  def schemaEncodeFailed(position: String, schema: String, problem: String, fix: String): KinesisException =
    new KinesisException("KINESIS_SCHEMA_ENCODE_FAILED",
      Map("position" -> position, "schema" -> schema, "problem" -> problem, "fix" -> fix))

  /** A schema the functions cannot use for this column or these options, found when the query is analyzed. */
  def invalidSchema(schema: String, problem: String, fix: String): KinesisOptionException =
    new KinesisOptionException("KINESIS_INVALID_SCHEMA",
      Map("schema" -> schema.capitalize, "problem" -> problem, "fix" -> fix))

  // Warnings: logged, never thrown. Each starts with its `[KINESIS_*]` name, as an error does, so that a search of
  // the logs finds it and docs/troubleshooting.md explains it; they are not error conditions of the JSON.

  /**
   * `late` of the `tasks` tasks of a real-time batch started only after its end, so Spark ended them before they
   * read: `shards` were not read in that batch. `next`: the tasks the next batches run, when that changes.
   */
  def executorCoresUnknown(cause: Throwable, executors: Int, coresEach: Int, source: String): String =
    s"[KINESIS_EXECUTOR_CORES_UNKNOWN] Could not read the executors' cores from Spark's status store " +
      s"(${cause.getClass.getSimpleName}: ${cause.getMessage}). Counting the task slots of the $executors " +
      s"executor${if (executors == 1) "" else "s"} Spark's status tracker lists now at $coresEach core" +
      s"${if (coresEach == 1) "" else "s"} each ($source), and the cores of executors that register later as they " +
      "do. Fewer slots than the executors have mean more shards per task, never a shard left unread; set " +
      "spark.executor.cores to count them exactly."

  def realTimeTasksLate(late: Int, tasks: Int, shards: Seq[String], next: Option[Int]): String =
    s"[KINESIS_REAL_TIME_TASKS_LATE] $late of the $tasks tasks of a real-time batch started only after the " +
      s"batch's end and read nothing, so these shards were not read in it: ${shards.mkString(", ")}. Their " +
      "records wait for the next batch. A task starts that late when other jobs of the application hold the task " +
      "slots (another query, say), or when its executor is slow to start it (a new executor's first tasks). " +
      next.fold("Should some tasks start too late again in the next batch, the batches after run fewer tasks.") { n =>
        s"Some did in consecutive batches: the next batches run $n task${if (n == 1) "" else "s"} (more shards " +
          "each), as many as started in time, until the application's task slots change. Give the query a free " +
          "task slot per task to read each shard in a task of its own."
      }
}
