package io.sparkkinesis.sink

import org.apache.spark.sql.connector.write.{LogicalWriteInfo, SupportsTruncate, Write, WriteBuilder}

import io.sparkkinesis.compat.StreamingUpdateAsAppend
import io.sparkkinesis.config.Dialect

/**
 * Builds the write once the input schema is known: options and columns are checked here, so a bad write
 * fails when the query starts, before any task runs. A streaming write takes Append and Update output modes alike:
 * in Update mode each updated row is written as a record (real-time mode runs in Update mode only). Under
 * `aws-kinesis` columns the sink does not use are left out, as the awslabs sink did; under `kinesis` they are refused.
 */
private[sparkkinesis] final class KinesisWriteBuilder(
    info: LogicalWriteInfo,
    progress: StreamingSinkProgress,
    dialect: Dialect = Dialect.Kinesis)
  extends WriteBuilder with SupportsTruncate with StreamingUpdateAsAppend {

  /** Kinesis cannot be truncated: every save mode appends (see docs/sink.md). */
  override def truncate(): WriteBuilder = this

  override def build(): Write = {
    val keyColumn = Option(info.options().get("partitionKeyColumn")).map(_.trim).filter(_.nonEmpty)
    val schema = SinkSchema.of(info.schema(), keyColumn, otherColumnsAllowed = dialect == Dialect.AwsKinesis)
    new KinesisWrite(SinkOptions.parse(info.options(), schema.hasStreamName, dialect), schema, progress)
  }
}
