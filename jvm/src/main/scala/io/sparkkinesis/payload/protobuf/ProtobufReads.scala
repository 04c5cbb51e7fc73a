package io.sparkkinesis.payload.protobuf

import java.math.{BigDecimal => JBigDecimal, BigInteger}
import java.util.Arrays

import org.apache.spark.sql.types.Decimal
import org.apache.spark.unsafe.types.UTF8String

import ProtoSchema._
import io.sparkkinesis.wire.WireReader
import io.sparkkinesis.errors.FieldPath.at

/** How [[ProtobufDecoder]] reads one value of each Protobuf type, and the default of a field left out. */
private[protobuf] object ProtobufReads {

  /** Reads one value off the reader (the buffer is the reader's, for length-delimited values). */
  type Read = (WireReader, Array[Byte]) => Any

  /** What a [[Read]] gives for a value that is an unknown field: a closed enum's number it does not have. */
  object Unknown

  /** The reader of one value of type `t`. */
  def readerOf(schema: ProtoSchema, t: FieldType, path: String): Read = t match {
    case Scalar("int32") => (in, _) => in.varint().toInt
    case Scalar("int64") => (in, _) => in.varint()
    case Scalar("uint32") => (in, _) => in.varint() & 0xFFFFFFFFL
    case Scalar("uint64") => (in, _) => unsigned64(in.varint())
    case Scalar("sint32") => (in, _) => { val n = in.varint().toInt; (n >>> 1) ^ -(n & 1) }
    case Scalar("sint64") => (in, _) => { val n = in.varint(); (n >>> 1) ^ -(n & 1) }
    case Scalar("bool") => (in, _) => in.varint() != 0
    case Scalar("fixed32") => (in, _) => in.fixed32() & 0xFFFFFFFFL
    case Scalar("sfixed32") => (in, _) => in.fixed32()
    case Scalar("float") => (in, _) => java.lang.Float.intBitsToFloat(in.fixed32())
    case Scalar("fixed64") => (in, _) => unsigned64(in.fixed64())
    case Scalar("sfixed64") => (in, _) => in.fixed64()
    case Scalar("double") => (in, _) => java.lang.Double.longBitsToDouble(in.fixed64())
    case Scalar("string") => (in, buf) => UTF8String.fromBytes(bytes(in, buf))
    case Scalar("bytes") => (in, buf) => bytes(in, buf)
    case EnumRef(name) =>
      val names = new java.util.HashMap[Integer, UTF8String]()
      val e = schema.enumNamed(name)
      // With aliases (allow_alias), a number's first name.
      e.values.reverse.foreach { case (n, v) => names.put(v, UTF8String.fromString(n)) }
      // A number an open (proto3) enum lacks is kept, as its decimal text; a closed (proto2) enum's reader treats
      // it as an unknown field, as protobuf does: the value is not the field's.
      val unknown: Int => Any = if (e.closed) _ => Unknown else v => UTF8String.fromString(v.toString)
      (in, _) => {
        val v = in.varint().toInt
        val known = names.get(v)
        if (known != null) known else unknown(v)
      }
    case MessageRef(name) =>
      val plan = new ProtobufDecoder.MessagePlan(schema, schema.messageNamed(name), path)
      (in, buf) => {
        val len = in.length()
        val start = in.position
        in.advance(len)
        plan.read(buf, start, start + len)
      }
    case other => throw new ProtobufConversionException(s"no reader for Protobuf type $other at ${at(path)}")
  }

  /** A length-delimited value's bytes, copied. */
  private def bytes(in: WireReader, buf: Array[Byte]): Array[Byte] = {
    val len = in.length()
    val start = in.position
    in.advance(len)
    Arrays.copyOfRange(buf, start, start + len)
  }

  private def unsigned64(v: Long): Decimal =
    if (v >= 0) Decimal(v) else Decimal(new JBigDecimal(java.lang.Long.toUnsignedString(v)), 20, 0)

  /**
   * The value of an absent field with a proto2 `[default = ...]`, from the default's text as the `.proto` file gives
   * it (integers in decimal, hex or octal; `inf`, `-inf`, `nan`; an enum value's name).
   */
  def declaredDefault(schema: ProtoSchema, f: Field, path: String): Option[() => Any] = f.default.map { text =>
    def integer: BigInteger = {
      val negative = text.startsWith("-")
      val digits = text.stripPrefix("-").stripPrefix("+")
      val n =
        if (digits.startsWith("0x") || digits.startsWith("0X")) new BigInteger(digits.substring(2), 16)
        else if (digits.length > 1 && digits.startsWith("0")) new BigInteger(digits.substring(1), 8)
        else new BigInteger(digits)
      if (negative) n.negate else n
    }
    def real: Double = text.toLowerCase(java.util.Locale.ROOT) match {
      case "inf" | "+inf" | "infinity" => Double.PositiveInfinity
      case "-inf" | "-infinity" => Double.NegativeInfinity
      case "nan" | "-nan" => Double.NaN
      case other => other.toDouble
    }
    val value: Any =
      try f.fieldType match {
          case Scalar("int32" | "sint32" | "sfixed32") => integer.intValueExact
          case Scalar("int64" | "sint64" | "sfixed64" | "uint32" | "fixed32") => integer.longValueExact
          case Scalar("uint64" | "fixed64") => Decimal(new JBigDecimal(integer), 20, 0)
          case Scalar("bool") => text == "true"
          case Scalar("float") => real.toFloat
          case Scalar("double") => real
          case Scalar("string") => UTF8String.fromString(text)
          case Scalar("bytes") =>
            if (text.forall(_ < 256)) text.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1)
            else text.getBytes(java.nio.charset.StandardCharsets.UTF_8)
          case EnumRef(_) => UTF8String.fromString(text)
          case other => throw new ProtobufConversionException(s"a default for a field of type $other")
        }
      catch {
        case e: ProtobufConversionException => throw e
        case e: RuntimeException =>
          throw new ProtobufConversionException(s"the default '$text' of ${at(path)} is not a value of its type " +
              s"(${e.getMessage})", e)
      }
    value match {
      case b: Array[Byte] => () => b.clone()
      case v => () => v
    }
  }

  /** The value of an absent field of type `t` that has no presence (a new one each time: rows own their values). */
  def defaultOf(schema: ProtoSchema, t: FieldType): () => Any = t match {
    case Scalar("int32" | "sint32" | "sfixed32") => () => 0
    case Scalar("int64" | "sint64" | "sfixed64" | "uint32" | "fixed32") => () => 0L
    case Scalar("uint64" | "fixed64") => () => Decimal(0L)
    case Scalar("bool") => () => false
    case Scalar("float") => () => 0.0f
    case Scalar("double") => () => 0.0
    case Scalar("string") => () => UTF8String.EMPTY_UTF8
    case Scalar(_) => () => new Array[Byte](0)
    case EnumRef(name) =>
      val values = schema.enumNamed(name).values
      val first = UTF8String.fromString(values.find(_._2 == 0).getOrElse(values.head)._1)
      () => first
    case MessageRef(name) => // a map's absent message value: the empty message
      val plan = new ProtobufDecoder.MessagePlan(schema, schema.messageNamed(name), "")
      () => plan.read(Array.emptyByteArray, 0, 0)
    case _ => () => null
  }
}
