package io.sparkkinesis.payload.avro

import io.sparkkinesis.compat.CollectionConverters._

import org.apache.avro.{LogicalTypes, Schema}
import org.apache.avro.Schema.Type._
import org.apache.spark.sql.types._
import io.sparkkinesis.errors.FieldPath._

/**
 * The Spark type of the values of an Avro schema, as [[AvroDecoder]] produces them and [[AvroEncoder]] takes them:
 * a record is a struct, a union with null a nullable value, int and long or float and double together a long or a
 * double, any other union a struct of members (`member0`, `member1`, ... of its non-null types, exactly one set),
 * and the logical types Spark has a type for (date, timestamps, decimal) that type. Other logical types are their
 * underlying type.
 */
private[sparkkinesis] object AvroTypes {

  /**
   * The Spark type of values of `schema`. Throws [[AvroConversionException]], naming the field's path, for what has
   * no Spark type: a record that contains itself, a decimal of more than 38 digits.
   */
  def sparkType(schema: Schema): DataType = typeAt(schema, "", Set.empty)

  /** Whether values of `schema` may be null: the null type, or a union with null among its types. */
  def nullable(schema: Schema): Boolean = schema.getType match {
    case NULL => true
    case UNION => schema.getTypes.asScala.exists(_.getType == NULL)
    case _ => false
  }

  /** What a union is for Spark: [[unionKind]] tells. */
  private[avro] sealed abstract class UnionKind

  /** Only null. */
  private[avro] case object OnlyNull extends UnionKind

  /** One type besides null (or alone): values of that type, null when the union has null. */
  private[avro] final case class Single(member: Schema) extends UnionKind

  /** int and long: a long. */
  private[avro] case object Longs extends UnionKind

  /** float and double: a double. */
  private[avro] case object Doubles extends UnionKind

  /** Several types: a struct with a field `member<i>` per non-null type, in the union's order. */
  private[avro] final case class Members(members: IndexedSeq[Schema]) extends UnionKind

  /** How `union` (a schema of type UNION) maps to Spark. */
  private[avro] def unionKind(union: Schema): UnionKind = {
    val members = union.getTypes.asScala.filter(_.getType != NULL).toIndexedSeq
    def all(types: Schema.Type*) = members.forall(m => types.contains(m.getType) && m.getLogicalType == null)
    if (members.isEmpty) OnlyNull
    else if (members.size == 1) Single(members.head)
    else if (all(INT, LONG)) Longs
    else if (all(FLOAT, DOUBLE)) Doubles
    else Members(members)
  }

  /** The name of `schema`'s logical type, or null. */
  private[avro] def logicalName(schema: Schema): String =
    if (schema.getLogicalType == null) null else schema.getLogicalType.getName

  /** The name of the field of a struct of members that holds member `i` of a union. */
  private[avro] def memberName(i: Int): String = s"member$i"

  /** `schema` in a few words: its type, name and logical type. */
  private[avro] def describe(schema: Schema): String = {
    val named = schema.getType match {
      case RECORD | ENUM | FIXED => s"${schema.getType.getName} ${schema.getFullName}"
      case _ => schema.getType.getName
    }
    if (schema.getLogicalType == null) named else s"$named (${schema.getLogicalType.getName})"
  }

  private def typeAt(schema: Schema, path: String, records: Set[String]): DataType =
    (schema.getType, logicalName(schema)) match {
      case (INT, "date") => DateType
      case (LONG, "timestamp-millis" | "timestamp-micros") => TimestampType
      case (LONG, "local-timestamp-millis" | "local-timestamp-micros") => TimestampNTZType
      case (BYTES | FIXED, "decimal") => decimalType(schema, path)
      case (NULL, _) => NullType
      case (BOOLEAN, _) => BooleanType
      case (INT, _) => IntegerType
      case (LONG, _) => LongType
      case (FLOAT, _) => FloatType
      case (DOUBLE, _) => DoubleType
      case (STRING | ENUM, _) => StringType
      case (BYTES | FIXED, _) => BinaryType
      case (RECORD, _) =>
        val name = schema.getFullName
        if (records.contains(name))
          throw new AvroConversionException(
            s"the Avro record $name contains itself (at ${at(path)}): a Spark type cannot nest itself")
        StructType(schema.getFields.asScala.map { f =>
          StructField(f.name, typeAt(f.schema, field(path, f.name), records + name), nullable(f.schema))
        }.toArray)
      case (ARRAY, _) =>
        val items = schema.getElementType
        ArrayType(typeAt(items, element(path), records), nullable(items))
      case (MAP, _) =>
        val values = schema.getValueType
        MapType(StringType, typeAt(values, mapValue(path), records), nullable(values))
      case (UNION, _) =>
        unionKind(schema) match {
          case OnlyNull => NullType
          case Single(member) => typeAt(member, path, records)
          case Longs => LongType
          case Doubles => DoubleType
          case Members(members) =>
            StructType(members.indices.map { i =>
              StructField(memberName(i), typeAt(members(i), field(path, memberName(i)), records), nullable = true)
            }.toArray)
        }
      case (other, _) => throw new AvroConversionException(s"Avro type $other at ${at(path)} has no Spark type")
    }

  private def decimalType(schema: Schema, path: String): DecimalType = {
    val d = schema.getLogicalType.asInstanceOf[LogicalTypes.Decimal]
    if (d.getPrecision > DecimalType.MAX_PRECISION)
      throw new AvroConversionException(s"the Avro decimal(${d.getPrecision}, ${d.getScale}) at ${at(path)} has more " +
        s"digits than a Spark decimal holds (${DecimalType.MAX_PRECISION})")
    DecimalType(d.getPrecision, d.getScale)
  }
}

/** An Avro schema or value that does not fit Spark's types, or the reverse; the message names the field's path. */
private[sparkkinesis] final class AvroConversionException(message: String, cause: Throwable = null)
  extends RuntimeException(message, cause)
