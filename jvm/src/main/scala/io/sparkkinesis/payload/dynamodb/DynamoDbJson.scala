package io.sparkkinesis.payload.dynamodb

import java.math.{BigDecimal => JBigDecimal}
import java.time.{Instant, LocalDate, OffsetDateTime}
import java.time.format.DateTimeParseException
import java.util.Base64

import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import com.fasterxml.jackson.databind.node.ObjectNode

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.catalyst.util.{ArrayBasedMapData, GenericArrayData}
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

import io.sparkkinesis.compat.CollectionConverters._

/**
 * A DynamoDB item in DynamoDB's typed JSON (`{"id": {"S": "a1"}, "total": {"N": "12.50"}}`), as DynamoDB Streams and
 * Kinesis Data Streams for DynamoDB write `Keys`, `NewImage` and `OldImage`, read into a Spark row of `schema`.
 * Fields are matched to attributes by name, exactly; attributes the schema does not name are left out, and a field
 * whose attribute is missing or `{"NULL": true}` is null. Each DynamoDB type goes into the Spark types that hold it
 * without loss (docs/dynamodb-json.md): a value that does not fit its field is an [[Unreadable]] naming the
 * attribute, never a silent null or a rounded number.
 */
private[sparkkinesis] final class DynamoDbJson(schema: StructType) {
  import DynamoDbJson._

  private val mapper = new ObjectMapper()

  /** The row of the item in `json`. */
  def read(json: String): InternalRow = {
    val item =
      try mapper.readTree(json)
      catch { case NonFatal(e) => throw Unreadable("", s"it is not JSON (${firstLine(e.getMessage)})") }
    item match {
      case o: ObjectNode => struct(o, schema, "")
      case other => throw Unreadable("", s"it is ${kindOf(other)}, not an item (an object of attributes)")
    }
  }

  private def struct(item: JsonNode, t: StructType, path: String): InternalRow = {
    val row = new GenericInternalRow(t.length)
    var i = 0
    while (i < t.length) {
      val f = t.fields(i)
      val attribute = item.get(f.name)
      if (attribute != null) row.update(i, value(attribute, f.dataType, join(path, f.name)))
      i += 1
    }
    row
  }

  /** One typed value (`{"<type>": ...}`) as a value of Spark type `t`; null for NULL. */
  private def value(typed: JsonNode, t: DataType, path: String): Any = {
    val (kind, v) = typedValue(typed, path)
    def refuse(): Nothing =
      throw Unreadable(path,
        s"it holds a DynamoDB $kind (${describe(kind)}), which a ${t.simpleString} field " +
          s"cannot hold: ${accepted(t)}")
    (kind, t) match {
      case ("NULL", _) => null
      case ("S", StringType) => UTF8String.fromString(text(v, kind, path))
      case ("N", StringType) => UTF8String.fromString(number(v, path).toString)
      case ("BOOL", StringType) => UTF8String.fromString(bool(v, path).toString)
      case ("N", n: NumericType) => numeric(number(v, path), n, path)
      case ("BOOL", BooleanType) => bool(v, path)
      case ("B", BinaryType) => binary(v, path)
      case ("N", TimestampType) =>
        val seconds = number(v, path)
        try seconds.movePointRight(6).setScale(0, java.math.RoundingMode.UNNECESSARY).longValueExact()
        catch { case _: ArithmeticException => throw Unreadable(path, s"$seconds is not a time in epoch seconds") }
      case ("S", TimestampType) => instant(text(v, kind, path), path)
      case ("S", DateType) =>
        val s = text(v, kind, path)
        try LocalDate.parse(s).toEpochDay.toInt
        catch { case _: DateTimeParseException => throw Unreadable(path, s"'$s' is not a date (yyyy-mm-dd)") }
      case ("M", s: StructType) => struct(v, s, path)
      case ("M", MapType(StringType, vt, _)) =>
        val entries = v.properties().asScala.toSeq
        new ArrayBasedMapData(new GenericArrayData(entries.map(e => UTF8String.fromString(e.getKey): Any).toArray),
          new GenericArrayData(entries.map(e => value(e.getValue, vt, s"$path.${e.getKey}")).toArray))
      case ("L", ArrayType(et, _)) => array(v, path)((e, p) => value(e, et, p))
      case ("SS", ArrayType(StringType, _)) => array(v, path)((e, p) => UTF8String.fromString(text(e, "S", p)))
      case ("NS", ArrayType(n: NumericType, _)) => array(v, path)((e, p) => numeric(number(e, p), n, p))
      case ("NS", ArrayType(StringType, _)) => array(v, path)((e, p) => UTF8String.fromString(number(e, p).toString))
      case ("BS", ArrayType(BinaryType, _)) => array(v, path)((e, p) => binary(e, p))
      case _ => refuse()
    }
  }

  private def array(v: JsonNode, path: String)(each: (JsonNode, String) => Any): GenericArrayData = {
    if (!v.isArray) throw Unreadable(path, s"its list or set is ${kindOf(v)}, not a JSON array")
    new GenericArrayData(v.elements().asScala.zipWithIndex.map { case (e, i) => each(e, s"$path[$i]") }.toArray)
  }

  private def typedValue(typed: JsonNode, path: String): (String, JsonNode) = {
    if (!typed.isObject || typed.size() != 1)
      throw Unreadable(path, s"""it is ${kindOf(typed)}, not a typed value such as {"S": "text"} or {"N": "1"}""")
    val entry = typed.properties().iterator().next()
    if (!Types.contains(entry.getKey))
      throw Unreadable(path, s"'${entry.getKey}' is not a DynamoDB type (${Types.mkString(", ")})")
    (entry.getKey, entry.getValue)
  }
}

private[sparkkinesis] object DynamoDbJson {

  /** DynamoDB's attribute types. */
  val Types: Seq[String] = Seq("S", "N", "B", "BOOL", "NULL", "M", "L", "SS", "NS", "BS")

  /** A value that cannot be read into its field: where (`path`, empty for the whole item) and why. */
  final case class Unreadable(path: String, problem: String) extends RuntimeException(problem)

  private def join(path: String, name: String): String = if (path.isEmpty) name else s"$path.$name"

  private def firstLine(s: String): String = Option(s).map(_.linesIterator.take(1).mkString).getOrElse("")

  private def kindOf(n: JsonNode): String =
    if (n.isObject) s"an object of ${n.size()} fields"
    else if (n.isArray) "an array"
    else if (n.isTextual) "a string"
    else if (n.isNumber) "a JSON number" else if (n.isBoolean) "a JSON boolean" else "null"

  private def describe(kind: String): String = kind match {
    case "S" => "a string"
    case "N" => "a number"
    case "B" => "binary"
    case "BOOL" => "a boolean"
    case "M" => "a map"
    case "L" => "a list"
    case "SS" => "a string set"
    case "NS" => "a number set"
    case "BS" => "a binary set"
    case other => other
  }

  /** What a field of type `t` takes, for messages. */
  private[dynamodb] def accepted(t: DataType): String = t match {
    case StringType => "a string field takes S, N or BOOL"
    case _: NumericType => s"a ${t.simpleString} field takes N"
    case BooleanType => "a boolean field takes BOOL"
    case BinaryType => "a binary field takes B"
    case TimestampType => "a timestamp field takes N (epoch seconds) or S (ISO-8601 with an offset)"
    case DateType => "a date field takes S (yyyy-mm-dd)"
    case _: StructType => "a struct field takes M"
    case MapType(StringType, _, _) => "a map field takes M"
    case ArrayType(StringType, _) => "an array of strings takes L, SS or NS"
    case ArrayType(_: NumericType, _) => "an array of numbers takes L or NS"
    case ArrayType(BinaryType, _) => "an array of binary takes L or BS"
    case _: ArrayType => "an array field takes L"
    case _ => s"no DynamoDB type reads into ${t.simpleString}"
  }

  /** Whether a schema's field types can all be read from DynamoDB's types: the first one that cannot, with its path. */
  def unsupported(t: DataType, path: String = ""): Option[(String, DataType)] = t match {
    case s: StructType => s.fields.iterator.flatMap(f => unsupported(f.dataType, join(path, f.name))).toSeq.headOption
    case MapType(StringType, v, _) => unsupported(v, s"$path.<value>")
    case m: MapType => Some((path, m))
    case ArrayType(e, _) => unsupported(e, s"$path[]")
    case StringType | BooleanType | BinaryType | TimestampType | DateType | _: NumericType => None
    case other => Some((path, other))
  }

  private def text(v: JsonNode, kind: String, path: String): String =
    if (v.isTextual) v.textValue() else throw Unreadable(path, s"its $kind value is ${kindOf(v)}, not a string")

  private def number(v: JsonNode, path: String): JBigDecimal = {
    val s = text(v, "N", path)
    try new JBigDecimal(s)
    catch { case _: NumberFormatException => throw Unreadable(path, s"'$s' is not a number") }
  }

  private def bool(v: JsonNode, path: String): Boolean =
    if (v.isBoolean) v.booleanValue() else throw Unreadable(path, s"its BOOL value is ${kindOf(v)}, not true or false")

  private def binary(v: JsonNode, path: String): Array[Byte] = {
    val s = text(v, "B", path)
    try Base64.getDecoder.decode(s)
    catch { case _: IllegalArgumentException => throw Unreadable(path, "its B value is not base64") }
  }

  private def instant(s: String, path: String): Long = {
    val at: Instant =
      try OffsetDateTime.parse(s).toInstant
      catch {
        case _: DateTimeParseException =>
          try Instant.parse(s)
          catch {
            case _: DateTimeParseException =>
              throw Unreadable(path, s"'$s' is not a time in ISO-8601 with an offset (2024-05-01T12:00:00Z)")
          }
      }
    Math.addExact(Math.multiplyExact(at.getEpochSecond, 1000000L), at.getNano / 1000L)
  }

  /** `n` as Spark numeric type `t`, exactly: a number `t` cannot hold (a fraction in an integer, too many digits). */
  private def numeric(n: JBigDecimal, t: NumericType, path: String): Any = {
    def tooBig(fix: String): Nothing = throw Unreadable(path, s"the number $n does not fit ${t.simpleString}; $fix")
    t match {
      case ByteType | ShortType | IntegerType | LongType =>
        val whole =
          try n.toBigIntegerExact
          catch { case _: ArithmeticException => tooBig("read it as a decimal or a double") }
        if (whole.bitLength() > (t match {
            case ByteType => 7; case ShortType => 15; case IntegerType => 31; case _ => 63
          }))
          tooBig("read it as a wider integer or a decimal")
        t match {
          case ByteType => whole.byteValue()
          case ShortType => whole.shortValue()
          case IntegerType => whole.intValue()
          case _ => whole.longValue()
        }
      case FloatType => n.floatValue()
      case DoubleType => n.doubleValue()
      case d: DecimalType =>
        val scaled =
          try n.setScale(d.scale, java.math.RoundingMode.UNNECESSARY)
          catch {
            case _: ArithmeticException =>
              tooBig(s"it has ${n.scale()} digits after the point; use a decimal with more scale")
          }
        if (scaled.precision() > d.precision)
          tooBig("use a decimal of more precision (DynamoDB numbers have up to 38 digits)")
        Decimal(scaled, d.precision, d.scale)
      case _ => tooBig("no other numeric type is read")
    }
  }
}
