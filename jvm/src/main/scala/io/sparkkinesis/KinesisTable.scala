package io.sparkkinesis

import java.util

import io.sparkkinesis.compat.CollectionConverters._

import org.apache.spark.sql.connector.catalog.{SupportsRead, SupportsWrite, TableCapability}
import org.apache.spark.sql.connector.read.ScanBuilder
import org.apache.spark.sql.connector.read.streaming.ReportsSinkMetrics
import org.apache.spark.sql.connector.write.{LogicalWriteInfo, WriteBuilder}
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.sparkkinesis.config.{Dialect, Scope, TableOptions}
import io.sparkkinesis.errors.KinesisErrors
import io.sparkkinesis.sink.{KinesisWriteBuilder, StreamingSinkProgress}
import io.sparkkinesis.source.{KinesisScan, ParsedRead, SourceOptions}

/**
 * One or more Kinesis streams seen as a table that can be read (batch and streaming) and written (batch and
 * streaming). As a streaming query's sink it reports the latest committed batch's sink counters in the query's
 * progress. Its options are read in the `dialect` of the format it was opened with. `properties`: what Spark opened
 * it with, the read's or write's options, or a session-catalog table's properties (`CREATE TABLE ... USING kinesis
 * OPTIONS (...)`, [[TableOptions]]); each read and write lays its own options over them. A read's, as the provider
 * parsed them (`parsed`) when the scan is built from the same options. A write takes any columns
 * (`ACCEPT_ANY_SCHEMA`): the sink checks them itself, so `INSERT INTO` a table of the catalog, whose schema is the
 * source's, writes what the sink's columns say. A table of a Kinesis catalog ([[KinesisCatalog]]) is named after its
 * stream (`tableName`) and shows the stream's `facts` beside its options.
 */
private[sparkkinesis] final class KinesisTable(
    tableSchema: StructType,
    dialect: Dialect = Dialect.Kinesis,
    parsed: Option[ParsedRead] = None,
    properties: Map[String, String] = Map.empty,
    facts: Map[String, String] = Map.empty,
    tableName: String = "kinesis")
  extends SupportsRead with SupportsWrite
  with ReportsSinkMetrics {

  private val sinkProgress = new StreamingSinkProgress

  private val tableOptions = TableOptions.unwrap(properties)

  /** This table's options of `scope` with those of one read or write laid over them. */
  private def withTable(options: CaseInsensitiveStringMap, scope: Scope): CaseInsensitiveStringMap =
    new CaseInsensitiveStringMap(TableOptions.overlay(TableOptions.forScope(tableOptions, scope, dialect),
        options.asCaseSensitiveMap().asScala.toMap).asJava)

  /** The table's options, secrets redacted, and its stream's facts: what `DESCRIBE TABLE EXTENDED` shows. */
  override def properties(): util.Map[String, String] = (TableOptions.shown(tableOptions, dialect) ++ facts).asJava

  override def name(): String = tableName

  /** What Spark shows for the table, e.g. as the sink of a streaming query's progress. */
  override def toString: String = "Kinesis"

  override def schema(): StructType = tableSchema

  /** Every format reads; `dynamodb-streams` only reads (DynamoDB is written through DynamoDB itself). */
  override def capabilities(): util.Set[TableCapability] =
    if (dialect == Dialect.DynamoDbStreams)
      util.EnumSet.of(TableCapability.BATCH_READ, TableCapability.MICRO_BATCH_READ)
    else
      util.EnumSet.of(TableCapability.BATCH_READ, TableCapability.MICRO_BATCH_READ, TableCapability.BATCH_WRITE,
        TableCapability.TRUNCATE, TableCapability.STREAMING_WRITE, TableCapability.ACCEPT_ANY_SCHEMA)

  override def newScanBuilder(options: CaseInsensitiveStringMap): ScanBuilder = {
    val asked = withTable(options, Scope.Source)
    val source = parsed.flatMap(_.of(asked)).getOrElse(SourceOptions.parse(asked, dialect))
    if (!source.columns.matches(tableSchema))
      throw KinesisErrors.userSchemaNotAllowed(dialect.format, source.columns.schema.fieldNames.toSeq)
    new KinesisScan(source)
  }

  override def newWriteBuilder(info: LogicalWriteInfo): WriteBuilder =
    new KinesisWriteBuilder(withTable(info.options(), Scope.Sink), info.schema(), sinkProgress, dialect)

  override def metrics(): util.Map[String, String] = sinkProgress.metrics.asJava
}
