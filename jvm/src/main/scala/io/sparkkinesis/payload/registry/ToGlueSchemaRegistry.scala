package io.sparkkinesis.payload.registry

import java.util.UUID

import scala.util.control.NonFatal

import org.apache.spark.TaskContext
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.expressions.{Expression, UnaryExpression}
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback
import org.apache.spark.sql.types.{BinaryType, DataType}

import io.sparkkinesis.errors.KinesisErrors

/**
 * `to_glue_schema_registry(value, schema, options)`: encodes each value with the writer schema found when the query
 * was analyzed ([[RegistrySchemas.writer]]: `definition`, and `schemaVersionId` when framed), framing it with the
 * Glue Schema Registry header (zlib-compressed with `compression=zlib`) unless framing=none. The value's type was
 * checked against the schema then; a value that still cannot be written (a null where the schema has none, an
 * unknown enum symbol) fails with [KINESIS_SCHEMA_ENCODE_FAILED]. A null value gives a null payload.
 */
private[sparkkinesis] final case class ToGlueSchemaRegistry(
    child: Expression,
    settings: RegistrySettings,
    definition: String,
    format: PayloadFormat,
    schemaVersionId: Option[UUID])
  extends UnaryExpression with CodegenFallback {

  @transient private lazy val encoder = format.encoder(child.dataType, definition, settings, settings.schemaText)
  @transient private var rows = 0L

  override def dataType: DataType = BinaryType
  override def nullable: Boolean = true
  override def prettyName: String = ToGlueSchemaRegistry.Name
  override def toString: String = s"$prettyName($child)"
  override def sql: String = s"$prettyName(${child.sql})"

  /** The value's type must fit the schema: checked once the plan is resolved ([KINESIS_INVALID_SCHEMA] if not). */
  override def checkInputDataTypes(): TypeCheckResult = {
    format.encoder(child.dataType, definition, settings, settings.schemaText)
    TypeCheckResult.TypeCheckSuccess
  }

  override protected def nullSafeEval(input: Any): Any = {
    rows += 1
    val body =
      try encoder.encode(input)
      catch {
        case NonFatal(e) =>
          val at = Option(TaskContext.get()).fold(s"row $rows")(t =>
            s"row $rows of partition ${t.partitionId()} of stage ${t.stageId()}")
          throw KinesisErrors.schemaEncodeFailed(at, settings.schemaText,
            Option(e.getMessage).getOrElse(e.getClass.getSimpleName).take(400),
            "Fix the value, or give a schema it fits (a union with null for a field that may be null)")
      }
    schemaVersionId match {
      case Some(id) => GlueFraming.frame(id, body, settings.compress)
      case None => body
    }
  }

  override protected def withNewChildInternal(newChild: Expression): ToGlueSchemaRegistry = copy(child = newChild)
}

private[sparkkinesis] object ToGlueSchemaRegistry {
  val Name = "to_glue_schema_registry"
}
