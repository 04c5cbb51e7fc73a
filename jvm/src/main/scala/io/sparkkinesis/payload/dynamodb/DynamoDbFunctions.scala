package io.sparkkinesis.payload.dynamodb

import scala.util.control.NonFatal

import org.apache.spark.sql.catalyst.FunctionIdentifier
import org.apache.spark.sql.catalyst.expressions.{Expression, ExpressionInfo}
import org.apache.spark.sql.types.{ArrayType, DataType, MapType, StringType, StructType}

import io.sparkkinesis.errors.KinesisErrors

/**
 * How `from_dynamodb_json` is made: from its SQL arguments (the builder the session extension registers) or from the
 * Scala and Python API (`io.sparkkinesis.functions`). The schema is a DDL string (`id STRING, total DECIMAL(12,2)`)
 * or Spark's JSON form of a struct, checked when the query is defined.
 */
private[sparkkinesis] object DynamoDbFunctions {

  type Builder = Seq[Expression] => Expression

  /** What the session extension registers, for `injectFunction`. */
  def all: Seq[(FunctionIdentifier, ExpressionInfo, Builder)] = Seq(
    (FunctionIdentifier(FromDynamoDbJson.Name),
      new ExpressionInfo(classOf[FromDynamoDbJson].getName, null, FromDynamoDbJson.Name,
        "_FUNC_(item, schema) - Reads a DynamoDB item in DynamoDB's typed JSON (a string such as " +
          "'{\"id\": {\"S\": \"a1\"}}') into a struct of the schema (a DDL string such as 'id STRING, total " +
          "DECIMAL(12,2)'). See docs/dynamodb-json.md.", "", "", "", "", "", "", "scala_udf"),
      fromSql))

  def read(item: Expression, schema: StructType): FromDynamoDbJson = {
    DynamoDbJson.unsupported(schema).foreach { case (path, t) =>
      throw KinesisErrors.invalidSchema(s"the schema of ${FromDynamoDbJson.Name}",
        s"field '$path' is ${t.simpleString}, which no DynamoDB type reads into",
        "Use string, boolean, binary, a numeric type, date, timestamp, struct, map<string, ...> or array " +
          "fields (docs/dynamodb-json.md, \"Types\")")
    }
    FromDynamoDbJson(item, schema)
  }

  /** `schema` as a DDL string or as Spark's JSON of a struct. */
  def parse(schema: String): StructType = {
    val parsed =
      try if (schema.trim.startsWith("{")) DataType.fromJson(schema) else StructType.fromDDL(schema)
      catch {
        case NonFatal(e) =>
          throw KinesisErrors.invalidSchema(s"the schema of ${FromDynamoDbJson.Name}",
            s"'$schema' is neither a DDL schema nor Spark's JSON of a struct (${e.getMessage.linesIterator.next()})",
            "Give the fields as DDL, for example 'id STRING, total DECIMAL(12,2), tags ARRAY<STRING>'")
      }
    parsed match {
      case s: StructType if s.nonEmpty => s
      case other =>
        throw KinesisErrors.invalidSchema(s"the schema of ${FromDynamoDbJson.Name}",
          s"it is ${other.simpleString}, not a struct of fields", "Name the item's attributes as fields")
    }
  }

  /** `t` with every field, element and value nullable. */
  def nullable(t: DataType): DataType = t match {
    case s: StructType => StructType(s.fields.map(f => f.copy(dataType = nullable(f.dataType), nullable = true)))
    case ArrayType(e, _) => ArrayType(nullable(e), containsNull = true)
    case MapType(StringType, v, _) => MapType(StringType, nullable(v), valueContainsNull = true)
    case other => other
  }

  private def fromSql(args: Seq[Expression]): Expression = args match {
    case Seq(item, schema) if schema.foldable && schema.dataType == StringType && schema.eval() != null =>
      read(item, parse(schema.eval().toString))
    case _ =>
      throw KinesisErrors.invalidSchema(s"the schema of ${FromDynamoDbJson.Name}",
        s"it was called with ${args.size} arguments",
        s"Call it as ${FromDynamoDbJson.Name}(item, 'id STRING, ...'), " +
          "the schema a constant string")
  }
}
