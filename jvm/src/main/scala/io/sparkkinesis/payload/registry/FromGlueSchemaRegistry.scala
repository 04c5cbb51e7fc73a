package io.sparkkinesis.payload.registry

import java.util.UUID

import scala.util.control.NonFatal

import org.apache.spark.TaskContext
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Expression, ExpectsInputTypes, GenericInternalRow, UnaryExpression}
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback
import org.apache.spark.sql.types.{BinaryType, DataType, StringType, StructField, StructType}
import org.apache.spark.unsafe.types.UTF8String

import io.sparkkinesis.errors.KinesisErrors

/**
 * `from_glue_schema_registry(data, options)`: decodes each payload into a struct of the reader schema
 * (`readerSchema`, fixed when the query was analyzed, [[RegistrySchemas]]). A framed payload's writer schema is the
 * version its header names, fetched once per executor ([[SchemaCache]]) and resolved to the reader schema by Avro's
 * rules, so records of several versions decode to one shape; a plain payload (framing=none) was written with the
 * reader schema. With `mode=permissive` a payload that cannot be decoded gives nulls and the reason in the field
 * `errorField`; otherwise it fails the query with [KINESIS_SCHEMA_DECODE_FAILED], naming the row and the schema
 * version id. `toString` and `sql` never show the options (they may hold credentials).
 */
private[sparkkinesis] final case class FromGlueSchemaRegistry(
    child: Expression,
    settings: RegistrySettings,
    readerSchema: String,
    format: PayloadFormat)
  extends UnaryExpression with ExpectsInputTypes with CodegenFallback {

  @transient private lazy val valueType: StructType = format.decodedType(readerSchema, settings, settings.schemaText)
  @transient private lazy val wrapped: Boolean = format.wrapped(readerSchema, settings, settings.schemaText)

  // Permissive: a payload that cannot be decoded gives nulls in every field, so every field may be null.
  override lazy val dataType: DataType =
    if (settings.permissive)
      StructType(valueType.fields.map(_.copy(nullable = true)) :+ StructField(settings.errorField, StringType))
    else valueType

  override def nullable: Boolean = true
  override def inputTypes = Seq(BinaryType)
  override def prettyName: String = FromGlueSchemaRegistry.Name
  override def toString: String = s"$prettyName($child)"
  override def sql: String = s"$prettyName(${child.sql})"

  // Per task: a decoder per writer version (decoders reuse their buffers, so they are not shared between threads).
  @transient private lazy val decoders = new java.util.HashMap[UUID, PayloadDecoder]()
  @transient private lazy val plain = format.decoder(readerSchema, readerSchema, settings)
  @transient private var rows = 0L

  override protected def nullSafeEval(input: Any): Any = {
    rows += 1
    val payload = input.asInstanceOf[Array[Byte]]
    var id: Option[UUID] = None
    try {
      val value =
        if (settings.framed) {
          // The header's id first, so that a body refused while inflated is named with its version id.
          id = Some(GlueFraming.schemaVersionId(payload))
          val body = GlueFraming.unframe(payload, settings.maxDecompressedSize)
          decoderOf(body.schemaVersionId).decode(body.bytes, body.offset, body.length)
        } else plain.decode(payload, 0, payload.length)
      shape(value)
    } catch {
      // The registry's errors (unreachable, access denied, no such version) are not the payload's: no mode
      // turns them into nulls, which would lose the records.
      case e: org.apache.spark.SparkThrowable => throw e
      case NonFatal(e) =>
        val (problem, fix) = FromGlueSchemaRegistry.explain(e, settings.framed)
        if (!settings.permissive)
          throw KinesisErrors.schemaDecodeFailed(FromGlueSchemaRegistry.position(rows),
            id.fold("(none: no header)")(_.toString), problem, fix)
        val row = new GenericInternalRow(valueType.length + 1)
        row.update(valueType.length, UTF8String.fromString(s"$problem${id.fold("")(i => s" (schema version id $i)")}"))
        row
    }
  }

  private def decoderOf(id: UUID): PayloadDecoder = {
    val known = decoders.get(id)
    if (known != null) known
    else {
      val version = SchemaCache.shared(settings.connection, id, settings.cacheSize, settings.cacheTtl.toNanos)
      if (!version.dataFormat.equalsIgnoreCase(format.name))
        throw new FromGlueSchemaRegistry.Undecodable(
          s"its schema version is ${version.dataFormat}, and the reader schema ${format.name}",
          "Give a reader schema of the payloads' format")
      val decoder = format.decoder(version.definition, readerSchema, settings)
      decoders.put(id, decoder)
      decoder
    }
  }

  private def shape(value: Any): Any = {
    val fields: InternalRow =
      if (wrapped) new GenericInternalRow(Array[Any](value)) else value.asInstanceOf[InternalRow]
    if (!settings.permissive) fields
    else {
      val row = new GenericInternalRow(valueType.length + 1)
      var i = 0
      while (i < valueType.length) { row.update(i, fields.get(i, valueType(i).dataType)); i += 1 }
      row
    }
  }

  override protected def withNewChildInternal(newChild: Expression): FromGlueSchemaRegistry = copy(child = newChild)
}

private[sparkkinesis] object FromGlueSchemaRegistry {
  val Name = "from_glue_schema_registry"

  /** A payload the connector will not decode, with why and what to do. */
  private final class Undecodable(val problem: String, val fix: String) extends RuntimeException(problem)

  /** Where the failing row is: its place in the task's partition (with its shard and sequence number beside it). */
  private def position(row: Long): String = Option(TaskContext.get()) match {
    case Some(t) => s"row $row of partition ${t.partitionId()} of stage ${t.stageId()}"
    case None => s"row $row"
  }

  private def explain(e: Throwable, framed: Boolean): (String, String) = e match {
    case u: Undecodable => (u.problem, u.fix)
    case t: GlueFraming.BodyTooLarge => (s"${t.getMessage}, the limit 'maxDecompressedSize' sets",
        "If its producer writes bodies this large, raise 'maxDecompressedSize'; otherwise the record is corrupt or " +
          "crafted to exhaust memory: mode=permissive keeps the query running and names each such payload")
    case n: GlueFraming.NotFramed => (s"it is not a Glue Schema Registry frame: ${n.getMessage}",
        "Check that the stream's producers use the Glue Schema Registry serializer, or read plain payloads with " +
          "framing=none; mode=permissive keeps the query running and names each payload's problem")
    case other =>
      val what = s"${other.getClass.getSimpleName}: ${Option(other.getMessage).getOrElse("")}".take(400)
      (s"the bytes do not match the ${if (framed) "writer" else "given"} schema ($what)",
        if (framed) "Check that the reader schema ('schemaName', 'schemaVersionNumber' or 'schemaDefinition') is " +
          "one every writer version resolves to under Avro's rules; mode=permissive keeps the query running"
        else "Check that 'schemaDefinition' or 'schemaName' is the schema the payloads were written with")
  }
}
