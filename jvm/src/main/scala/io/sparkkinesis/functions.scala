package io.sparkkinesis

import org.apache.spark.sql.Column
import org.apache.spark.sql.types.StructType

import io.sparkkinesis.compat.CollectionConverters._
import io.sparkkinesis.compat.Columns
import io.sparkkinesis.payload.dynamodb.DynamoDbFunctions
import io.sparkkinesis.payload.registry.SchemaRegistryFunctions

/**
 * The connector's column functions for the DataFrame API (Scala, Java, and PySpark's classic sessions; SQL and
 * Spark Connect call them by name through [[KinesisSparkExtensions]]). docs/schema-registry.md shows each in use.
 *
 * {{{
 *   import io.sparkkinesis.functions._
 *   val orders = spark.readStream.format("kinesis").option("streamName", "orders").load()
 *     .select(from_glue_schema_registry($"data", Map("registryName" -> "shop", "schemaName" -> "orders")).as("order"))
 * }}}
 */
object functions {

  /** Decodes the Glue Schema Registry payloads of `data` into a struct of the reader schema the options name. */
  def from_glue_schema_registry(data: Column, options: Map[String, String]): Column =
    Columns.of(SchemaRegistryFunctions.decode(Columns.expression(data), options))

  /** [[from_glue_schema_registry]] for Java (and Python). */
  def from_glue_schema_registry(data: Column, options: java.util.Map[String, String]): Column =
    from_glue_schema_registry(data, options.asScala.toMap)

  /**
   * Encodes `value` as Glue Schema Registry payloads with the Avro schema `schema` (null: the registered schema
   * `schemaName` of the options), for the Kinesis sink's `data` column.
   */
  def to_glue_schema_registry(value: Column, schema: String, options: Map[String, String]): Column =
    Columns.of(SchemaRegistryFunctions.encode(Columns.expression(value), Option(schema), options))

  /** [[to_glue_schema_registry]] for Java (and Python). */
  def to_glue_schema_registry(value: Column, schema: String, options: java.util.Map[String, String]): Column =
    to_glue_schema_registry(value, schema, options.asScala.toMap)

  /**
   * Reads DynamoDB items in DynamoDB's typed JSON (strings such as `{"id": {"S": "a1"}, "total": {"N": "12.5"}}`)
   * into a struct of `schema` (docs/dynamodb-json.md).
   */
  def from_dynamodb_json(item: Column, schema: StructType): Column =
    Columns.of(DynamoDbFunctions.read(Columns.expression(item), schema))

  /** [[from_dynamodb_json]] with the schema as a DDL string (`id STRING, total DECIMAL(12,2)`). */
  def from_dynamodb_json(item: Column, schema: String): Column =
    from_dynamodb_json(item, DynamoDbFunctions.parse(schema))
}
