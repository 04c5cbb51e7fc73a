package io.sparkkinesis.payload.protobuf

import org.apache.spark.sql.types._

import ProtoSchema._
import io.sparkkinesis.errors.FieldPath._

/**
 * The Spark type of a Protobuf message, as [[ProtobufDecoder]] produces its values and [[ProtobufEncoder]] takes
 * them: a message is a struct of its fields in declared order (oneof members among them, each nullable); int32,
 * sint32 and sfixed32 are ints; int64, sint64, sfixed64 and the unsigned 32-bit uint32 and fixed32 are longs;
 * the unsigned 64-bit uint64 and fixed64 are decimal(20, 0); an enum is the string of its value's name; repeated
 * is an array (no null elements) and map a map. A field is nullable when its absence is not a value: proto2
 * `optional`, proto3 `optional`, oneof members and message fields; a proto3 scalar without a label reads as its
 * default (0, "", false, the enum's first value) when absent, `required` must be there, and an absent repeated or
 * map field is empty.
 */
private[sparkkinesis] object ProtobufTypes {

  /**
   * The struct of message `message` (full or simple name) of `schema`. Throws [[ProtobufConversionException]] for
   * a message that contains itself, naming the field's path: a Spark type cannot nest itself.
   */
  def sparkType(schema: ProtoSchema, message: String): StructType =
    structOf(schema, schema.message(message), "", Set.empty)

  /** Whether `field`'s value may be null (its absence is no value). */
  def nullable(field: Field): Boolean = field.label match {
    case Optional => true
    case Implicit => field.fieldType.isInstanceOf[MessageRef]
    case Required | Repeated => false
  }

  private[protobuf] def structOf(schema: ProtoSchema, m: Message, path: String, seen: Set[String]): StructType = {
    if (seen(m.fullName))
      throw new ProtobufConversionException(s"the Protobuf message ${m.fullName} contains itself (at ${at(path)}): " +
        "a Spark type cannot nest itself")
    StructType(m.fields.map { f =>
      val fieldPath = field(path, f.name)
      val dt = f.fieldType match {
        case MapOf(key, value, _) =>
          MapType(valueType(schema, key, path, seen), valueType(schema, value, mapValue(fieldPath), seen + m.fullName),
            valueContainsNull = false)
        case t if f.repeated => ArrayType(valueType(schema, t, element(fieldPath), seen + m.fullName), false)
        case t => valueType(schema, t, fieldPath, seen + m.fullName)
      }
      StructField(f.name, dt, nullable(f))
    }.toArray)
  }

  private def valueType(schema: ProtoSchema, t: FieldType, path: String, seen: Set[String]): DataType = t match {
    case Scalar(name) => scalarType(name)
    case EnumRef(_) => StringType
    case MessageRef(name) => structOf(schema, schema.messageNamed(name), path, seen)
    case other => throw new ProtobufConversionException(s"unexpected Protobuf type $other at ${at(path)}")
  }

  /** The Spark type of a scalar type's values. */
  def scalarType(name: String): DataType = name match {
    case "int32" | "sint32" | "sfixed32" => IntegerType
    case "int64" | "sint64" | "sfixed64" | "uint32" | "fixed32" => LongType
    case "uint64" | "fixed64" => Unsigned64
    case "bool" => BooleanType
    case "float" => FloatType
    case "double" => DoubleType
    case "string" => StringType
    case "bytes" => BinaryType
    case other => throw new ProtobufConversionException(s"'$other' is not a Protobuf scalar type")
  }

  /** The type of uint64 and fixed64 values: 0 to 2^64 - 1 take 20 digits. */
  val Unsigned64: DecimalType = DecimalType(20, 0)

  /** A field's type as the `.proto` file writes it. */
  private[protobuf] def describe(f: Field): String = {
    val t = f.fieldType match {
      case Scalar(n) => n
      case MessageRef(n) => n
      case EnumRef(n) => n
      case MapOf(k, v, _) => s"map<${k.name}, ${describe(f.copy(fieldType = v, label = Optional))}>"
    }
    if (f.repeated && !f.fieldType.isInstanceOf[MapOf]) s"repeated $t" else t
  }
}
