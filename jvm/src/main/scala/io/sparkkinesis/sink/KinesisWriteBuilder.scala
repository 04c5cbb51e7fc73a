package io.sparkkinesis.sink

import org.apache.spark.sql.connector.write.{SupportsTruncate, Write, WriteBuilder}
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.sparkkinesis.compat.StreamingUpdateAsAppend
import io.sparkkinesis.config.Dialect
import io.sparkkinesis.writer.{SinkOptions, SinkSchema}

/**
 * Builds the write once the input schema is known: options and columns are checked here, so a bad write
 * fails when the query starts, before any task runs. A streaming write takes Append and Update output modes alike:
 * in Update mode each updated row is written as a record (real-time mode runs in Update mode only). The options are
 * read in the format's `dialect`; what it changes reaches the sink as plain settings (`unusedColumns`, ...), and it
 * names the column of a row's target stream ([[SinkSchema]]).
 */
private[sparkkinesis] final class KinesisWriteBuilder(
    options: CaseInsensitiveStringMap,
    inputSchema: StructType,
    progress: StreamingSinkProgress,
    dialect: Dialect = Dialect.Kinesis)
  extends WriteBuilder with SupportsTruncate with StreamingUpdateAsAppend {

  /** Kinesis cannot be truncated: every save mode appends (see docs/sink.md). */
  override def truncate(): WriteBuilder = this

  override def build(): Write = {
    val parsed = SinkOptions.parse(options, SinkSchema.hasStreamColumn(inputSchema, dialect), dialect)
    val schema = SinkSchema.of(inputSchema, parsed.partitionKeyColumn, parsed.ignoreUnusedColumns, dialect)
    new KinesisWrite(parsed, schema, progress)
  }
}
