package io.sparkkinesis

import java.util

import io.sparkkinesis.compat.CollectionConverters._

import org.apache.spark.sql.connector.catalog.{SupportsRead, SupportsWrite, TableCapability}
import org.apache.spark.sql.connector.read.ScanBuilder
import org.apache.spark.sql.connector.read.streaming.ReportsSinkMetrics
import org.apache.spark.sql.connector.write.{LogicalWriteInfo, WriteBuilder}
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.sparkkinesis.config.Dialect
import io.sparkkinesis.errors.KinesisErrors
import io.sparkkinesis.sink.{KinesisWriteBuilder, StreamingSinkProgress}
import io.sparkkinesis.reader.KinesisSchema
import io.sparkkinesis.source.{KinesisScan, ParsedRead, SourceOptions}

/**
 * One or more Kinesis streams seen as a table that can be read (batch) and written (batch and streaming). As a
 * streaming query's sink it reports the latest committed batch's sink counters in the query's progress. Its options
 * are read in the `dialect` of the format it was opened with; a read's, as the provider parsed them (`parsed`) when
 * the scan is built from the same options.
 */
private[sparkkinesis] final class KinesisTable(
    tableSchema: StructType,
    dialect: Dialect = Dialect.Kinesis,
    parsed: Option[ParsedRead] = None)
  extends SupportsRead with SupportsWrite
  with ReportsSinkMetrics {

  private val sinkProgress = new StreamingSinkProgress

  override def name(): String = "kinesis"

  /** What Spark shows for the table, e.g. as the sink of a streaming query's progress. */
  override def toString: String = "Kinesis"

  override def schema(): StructType = tableSchema

  override def capabilities(): util.Set[TableCapability] = util.EnumSet.of(
    TableCapability.BATCH_READ, TableCapability.MICRO_BATCH_READ, TableCapability.BATCH_WRITE, TableCapability.TRUNCATE,
    TableCapability.STREAMING_WRITE)

  override def newScanBuilder(options: CaseInsensitiveStringMap): ScanBuilder = {
    if (tableSchema != KinesisSchema.schema) throw KinesisErrors.userSchemaNotAllowed()
    new KinesisScan(parsed.flatMap(_.of(options)).getOrElse(SourceOptions.parse(options, dialect)))
  }

  override def newWriteBuilder(info: LogicalWriteInfo): WriteBuilder =
    new KinesisWriteBuilder(info, sinkProgress, dialect)

  override def metrics(): util.Map[String, String] = sinkProgress.metrics.asJava
}
