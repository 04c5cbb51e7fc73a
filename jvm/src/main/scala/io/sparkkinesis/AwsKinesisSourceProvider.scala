package io.sparkkinesis

import io.sparkkinesis.config.Dialect

/**
 * The connector registered a second time, as format `aws-kinesis`, so that programs written for the awslabs
 * connector run unchanged: their `kinesis.*` options are read as this connector's (see
 * `config.ForeignOptions`), with the awslabs defaults where they change what is written. The awslabs jar registers
 * the same name, so the two jars must not share a classpath (Spark refuses a name two sources register).
 */
final class AwsKinesisSourceProvider extends KinesisSourceProvider(Dialect.AwsKinesis)
