package io.sparkkinesis.config

/**
 * Which program's names a query may use, chosen by the format it was opened with: `kinesis` takes this
 * connector's option names plus those of the Databricks source and of qubole kinesis-sql (which also call themselves
 * `kinesis`); `aws-kinesis` takes this connector's names plus the `kinesis.*` names of the awslabs connector
 * (awslabs/spark-sql-kinesis-connector), with the defaults its users get where those differ in what is written
 * ([[KinesisOptions.dialectDefaults]]). The foreign names are declared in [[ForeignOptions]].
 *
 * The format also names the columns: a read's are Databricks' under `kinesis` and the awslabs connector's under
 * `aws-kinesis` (`reader.KinesisSchema`), where `streamColumn` holds a record's stream. `sinkStreamColumn` is the
 * column the sink takes a row's target stream from: under `kinesis` the same `stream` a read gives; under
 * `aws-kinesis` none, since the awslabs sink writes every row to its `streamName` option (a read's `streamName`
 * column passed on to the sink is left out, as there, rather than sending rows back to the stream they came from).
 */
sealed abstract class Dialect(val format: String, val streamColumn: String, val sinkStreamColumn: Option[String])
  extends Serializable
private[sparkkinesis] object Dialect {
  case object Kinesis extends Dialect("kinesis", "stream", Some("stream"))
  case object AwsKinesis extends Dialect("aws-kinesis", "streamName", None)

  /**
   * `format("dynamodb-streams")`: a DynamoDB table's change stream read by the same engine (docs/dynamodb-streams.md).
   * It takes this connector's names only, reads one stream (`tableName` or `dynamoDbStreamArn`) and writes nothing.
   */
  case object DynamoDbStreams extends Dialect("dynamodb-streams", "dynamoDbStreamArn", None)
}
