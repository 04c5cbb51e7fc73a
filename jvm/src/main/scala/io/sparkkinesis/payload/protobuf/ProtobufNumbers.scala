package io.sparkkinesis.payload.protobuf

import java.math.BigInteger

import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

import ProtoSchema.Enum
import io.sparkkinesis.errors.FieldPath.at

/** How [[ProtobufEncoder]] turns Catalyst numbers and enum names into the bits of Protobuf's integer types. */
private[protobuf] object ProtobufNumbers {

  private val TwoTo64 = BigInteger.ONE.shiftLeft(64)

  /**
   * The Long of a Catalyst integer of type `dt`, if `dt` can be written as Protobuf scalar `name`: any integer type,
   * and for uint64 and fixed64 also a decimal (an integer below 2^64, given as its unsigned 64 bits).
   */
  def integral(dt: DataType, name: String, path: String): Option[Any => Long] = (dt, name) match {
    case (_, "double" | "float" | "bool" | "string" | "bytes") => None
    case (ByteType, _) => Some(_.asInstanceOf[Byte].toLong)
    case (ShortType, _) => Some(_.asInstanceOf[Short].toLong)
    case (IntegerType, _) => Some(_.asInstanceOf[Int].toLong)
    case (LongType, _) => Some(_.asInstanceOf[Long])
    case (_: DecimalType, "uint64" | "fixed64") => Some(v => unsigned64(v.asInstanceOf[Decimal], path))
    case _ => None
  }

  private def unsigned64(d: Decimal, path: String): Long = {
    val b = d.toJavaBigDecimal
    val n =
      try b.toBigIntegerExact
      catch { case _: ArithmeticException => null }
    if (n == null || n.signum < 0 || n.compareTo(TwoTo64) >= 0)
      throw new ProtobufConversionException(s"$b at ${at(path)} is not an unsigned 64-bit integer (0 to 2^64 - 1)")
    n.longValue
  }

  /**
   * What the wire holds for a value of Protobuf scalar `name` read with `toLong` from Spark type `dt`: checked
   * against the type's range (an int32 takes no long beyond Int's), zigzag-encoded for sint32 and sint64.
   */
  def bits(name: String, dt: DataType, toLong: Any => Long, path: String): Any => Long = {
    def check(low: Long, high: Long): Any => Long = v => {
      val n = toLong(v)
      if (n < low || n > high)
        throw new ProtobufConversionException(s"$n at ${at(path)} is out of the range of Protobuf $name " +
          s"($low to $high)")
      n
    }
    val int = check(Int.MinValue.toLong, Int.MaxValue.toLong)
    name match {
      case "int32" | "sfixed32" => int
      case "uint32" | "fixed32" => check(0L, 0xFFFFFFFFL)
      case "sint32" => v => { val n = int(v).toInt; ((n << 1) ^ (n >> 31)) & 0xFFFFFFFFL }
      case "sint64" => v => { val n = toLong(v); (n << 1) ^ (n >> 63) }
      case "uint64" | "fixed64" if !dt.isInstanceOf[DecimalType] => check(0L, Long.MaxValue)
      case _ => toLong // int64, sfixed64, and uint64 or fixed64 from a decimal (checked as it is read)
    }
  }

  /** The number of an enum value given as its name (or a number's decimal text) or its number. */
  def enumNumber(dt: DataType, e: Enum, path: String): Any => Long = {
    val numbers = new java.util.HashMap[UTF8String, java.lang.Long]()
    e.values.foreach { case (n, v) => numbers.put(UTF8String.fromString(n), java.lang.Long.valueOf(v.toLong)) }
    if (dt == IntegerType) v => v.asInstanceOf[Int].toLong
    else v => {
      val n = numbers.get(v)
      if (n != null) n.longValue
      else
        try v.toString.toInt.toLong
        catch {
          case _: NumberFormatException =>
            throw new ProtobufConversionException(s"'$v' at ${at(path)} is not a value of the Protobuf enum " +
              s"${e.fullName} (${e.values.map(_._1).mkString(", ")})")
        }
    }
  }
}
