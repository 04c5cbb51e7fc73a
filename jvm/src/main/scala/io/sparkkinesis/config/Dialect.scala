package io.sparkkinesis.config

/**
 * Which program's names a query may use, chosen by the format it was opened with: `kinesis` takes this
 * connector's option names plus those of the Databricks source and of qubole kinesis-sql (which also call themselves
 * `kinesis`); `aws-kinesis` takes this connector's names plus the `kinesis.*` names of the awslabs connector
 * (awslabs/spark-sql-kinesis-connector), with the defaults its users get where those differ in what is written
 * ([[KinesisOptions.dialectDefaults]]). The foreign names are declared in [[ForeignOptions]].
 *
 * The format also names the columns: a read's are Databricks' under `kinesis` and the awslabs connector's under
 * `aws-kinesis` (`reader.KinesisSchema`), and `streamColumn`, the column that holds a record's stream, is the one
 * both a read gives and the sink takes as each row's target stream.
 */
sealed abstract class Dialect(val format: String, val streamColumn: String) extends Serializable
private[sparkkinesis] object Dialect {
  case object Kinesis extends Dialect("kinesis", "stream")
  case object AwsKinesis extends Dialect("aws-kinesis", "streamName")
}
