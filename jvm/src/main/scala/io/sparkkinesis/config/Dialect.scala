package io.sparkkinesis.config

/**
 * Which program's option names a query may use, chosen by the format it was opened with: `kinesis` takes this
 * connector's names plus those of the Databricks source and of qubole kinesis-sql (which also call themselves
 * `kinesis`); `aws-kinesis` takes this connector's names plus the `kinesis.*` names of the awslabs connector
 * (awslabs/spark-sql-kinesis-connector), with the defaults its users get where those differ in what is written
 * ([[KinesisOptions.dialectDefaults]]). The foreign names are declared in [[ForeignOptions]].
 */
sealed abstract class Dialect(val format: String) extends Serializable
private[sparkkinesis] object Dialect {
  case object Kinesis extends Dialect("kinesis")
  case object AwsKinesis extends Dialect("aws-kinesis")
}
