package io.sparkkinesis

import java.util

import io.sparkkinesis.compat.CollectionConverters._

import org.apache.spark.sql.connector.catalog.{Table, TableProvider}
import org.apache.spark.sql.connector.expressions.Transform
import org.apache.spark.sql.sources.DataSourceRegister
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.sparkkinesis.aws.{DynamoDbStreams, StreamCheck}
import io.sparkkinesis.config.Dialect
import io.sparkkinesis.reader.KinesisSchema
import io.sparkkinesis.source.{ParsedRead, SourceOptions}

/**
 * Entry point registered as format `kinesis`: wiring only. `inferSchema` runs when a read is defined (`load()`;
 * writes hand over their schema, see [[supportsExternalMetadata]], so it never runs for them): the read's
 * options are checked there, then that every stream exists ([[StreamCheck]]), so a misspelt stream, region or
 * endpoint fails at `load()`. The checks that depend on batch or streaming run when the scan is built. Options are
 * read in the format's [[Dialect]], which also names the read's columns: [[AwsKinesisSourceProvider]] registers the
 * same connector as `aws-kinesis`, and [[DynamoDbStreamsSourceProvider]] its read of DynamoDB tables' change streams as
 * `dynamodb-streams`.
 */
class KinesisSourceProvider private[sparkkinesis] (dialect: Dialect) extends TableProvider with DataSourceRegister {

  def this() = this(Dialect.Kinesis)

  override def shortName(): String = dialect.format

  /** The read's options as `inferSchema` parsed them, handed to the table so that its scan does not parse again. */
  @volatile private var parsed: Option[ParsedRead] = None

  override def inferSchema(options: CaseInsensitiveStringMap): StructType = {
    val source = SourceOptions.parse(options, dialect)
    if (dialect == Dialect.DynamoDbStreams) source.streams.foreach(DynamoDbStreams.requireEnabled(source.connection, _))
    else StreamCheck.requireExisting(source.connection, source.streams)
    parsed = Some(ParsedRead(options, source))
    source.columns.schema
  }

  /** Writes hand over the DataFrame's schema; reads get the format's [[KinesisSchema]] from `inferSchema`. */
  override def supportsExternalMetadata(): Boolean = true

  override def getTable(
      schema: StructType,
      partitioning: Array[Transform],
      properties: util.Map[String, String]): Table =
    new KinesisTable(schema, dialect, parsed, properties.asScala.toMap)
}
