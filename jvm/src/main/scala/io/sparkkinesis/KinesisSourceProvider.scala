package io.sparkkinesis

import java.util

import org.apache.spark.sql.connector.catalog.{Table, TableProvider}
import org.apache.spark.sql.connector.expressions.Transform
import org.apache.spark.sql.sources.DataSourceRegister
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.sparkkinesis.aws.StreamRef
import io.sparkkinesis.config.{KinesisOptions, ParsedOptions, Scope}
import io.sparkkinesis.reader.KinesisSchema

/**
 * Entry point registered as format `kinesis`: wiring only. `inferSchema` runs when a read is defined
 * (`load()`), so option names and stream names are checked there; the scope-specific checks run when the
 * scan or the write is built.
 */
final class KinesisSourceProvider extends TableProvider with DataSourceRegister {

  override def shortName(): String = "kinesis"

  override def inferSchema(options: CaseInsensitiveStringMap): StructType = {
    val opts = ParsedOptions(options, Scope.Both)
    StreamRef.parseList(opts.required(KinesisOptions.StreamName, "orders"))
    KinesisSchema.schema
  }

  /** Writes hand over the DataFrame's schema; reads get [[KinesisSchema.schema]] from `inferSchema`. */
  override def supportsExternalMetadata(): Boolean = true

  override def getTable(
      schema: StructType,
      partitioning: Array[Transform],
      properties: util.Map[String, String]): Table =
    new KinesisTable(schema)
}
