package io.sparkkinesis.payload.jsonschema

import java.io.ByteArrayOutputStream
import java.time.{LocalDate, OffsetDateTime}
import java.time.chrono.IsoChronology
import java.time.format.{DateTimeFormatter, DateTimeFormatterBuilder, DateTimeParseException, ResolverStyle}
import java.util.Locale

import scala.util.control.NonFatal

import com.fasterxml.jackson.core.{JsonEncoding, JsonFactory, JsonGenerator, JsonParser, JsonToken}
import com.fasterxml.jackson.core.JsonParser.NumberType
import com.fasterxml.jackson.core.JsonToken._
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.catalyst.util.{ArrayBasedMapData, GenericArrayData}
import org.apache.spark.unsafe.types.UTF8String

import JsonSchemaTypes._

/**
 * Decodes UTF-8 JSON text to Catalyst values of `JsonSchemaTypes.sparkType(reader)`, where `reader` is the JSON
 * Schema definition to read with: an `InternalRow` for an object with properties (properties the schema does not
 * name are skipped, missing ones are null), a map for an object of additional properties, an array, a string, a
 * long, a double (a JSON integer too), a boolean, days for a date, microseconds for a date-time (ISO-8601 with an
 * offset), and the compact JSON text of a value whose schema falls back to text (numbers as written).
 *
 * The reading is planned once, here: a function per schema node, which reads its value off Jackson's streaming
 * parser straight into its Catalyst form, with no JSON tree in between; an object's properties are looked up by
 * name in a map made here. A value of the wrong JSON type, a null where the schema allows none, or a required
 * property that is missing throws [[JsonSchemaConversionException]] naming the path and what was found. Not
 * thread-safe (one per task or thread): it reuses buffers between calls, never in what it returns, so a returned
 * row stays valid after the next call.
 */
private[sparkkinesis] final class JsonSchemaDecoder(reader: String) {
  private val factory = newFactory()
  private val read: JsonSchemaDecoder.Read = JsonSchemaDecoder.readerOf(shapeOf(reader), nullOk = true, factory)

  /** The value of the JSON text in `bytes(offset until offset + length)`; text that does not fit throws. */
  def decode(bytes: Array[Byte], offset: Int, length: Int): Any = {
    val parser = factory.createParser(bytes, offset, length)
    try {
      if (parser.nextToken() == null) throw new JsonSchemaConversionException(s"no JSON value in $length bytes")
      val value = read(parser)
      if (parser.nextToken() != null)
        throw new JsonSchemaConversionException(s"more than one JSON value in $length bytes")
      value
    } catch {
      case e: JsonSchemaConversionException => throw e
      case NonFatal(e) => throw new JsonSchemaConversionException(s"cannot decode $length bytes as JSON: $e", e)
    } finally parser.close()
  }
}

private[sparkkinesis] object JsonSchemaDecoder {

  /** Reads the value the parser is on (its first token), leaving the parser on the value's last token. */
  private type Read = JsonParser => Any

  /** ISO-8601 with an offset, `T` and `Z` in either case (RFC 3339). */
  private val DateTime: DateTimeFormatter = new DateTimeFormatterBuilder().parseCaseInsensitive()
    .append(DateTimeFormatter.ISO_OFFSET_DATE_TIME).toFormatter(Locale.ROOT)
    .withChronology(IsoChronology.INSTANCE).withResolverStyle(ResolverStyle.STRICT)

  /** What the parser is on, in words. */
  private def found(p: JsonParser): String = p.currentToken match {
    case START_OBJECT => "an object"
    case START_ARRAY => "an array"
    case VALUE_STRING => s"the string '${clip(p.getText)}'"
    case VALUE_NUMBER_INT | VALUE_NUMBER_FLOAT => s"the number ${clip(p.getText)}"
    case VALUE_TRUE | VALUE_FALSE => s"the boolean ${p.getText}"
    case VALUE_NULL => "null"
    case other => String.valueOf(other)
  }

  /** A value of the wrong JSON type (or form) at `shape`'s path. */
  private def wrong(shape: Shape, p: JsonParser, why: String = "") = new JsonSchemaConversionException(
    s"expected ${describe(shape.kind)} at ${shape.path}, found ${found(p)}$why")

  /** The reader of `shape`'s values; `nullOk`: whether a JSON null is let through (as null) here. */
  private def readerOf(shape: Shape, nullOk: Boolean, factory: JsonFactory): Read = {
    val value: Read = shape.kind match {
      case StringKind => p =>
          if (p.currentToken == VALUE_STRING) UTF8String.fromString(p.getText) else throw wrong(shape, p)
      case DateKind => p =>
          if (p.currentToken != VALUE_STRING) throw wrong(shape, p)
          try LocalDate.parse(p.getText).toEpochDay.toInt
          catch { case _: DateTimeParseException => throw wrong(shape, p) }
      case TimestampKind => p =>
          if (p.currentToken != VALUE_STRING) throw wrong(shape, p)
          try {
            val instant = OffsetDateTime.parse(p.getText, DateTime).toInstant
            Math.addExact(Math.multiplyExact(instant.getEpochSecond, 1000000L), (instant.getNano / 1000).toLong)
          } catch {
            case _: DateTimeParseException | _: ArithmeticException => throw wrong(shape, p)
          }
      case IntegerKind => p =>
          p.currentToken match {
            case VALUE_NUMBER_INT if p.getNumberType != NumberType.BIG_INTEGER => p.getLongValue
            case VALUE_NUMBER_INT => throw wrong(shape, p, ", beyond a long")
            case VALUE_NUMBER_FLOAT =>
              try p.getDecimalValue.longValueExact
              catch { case _: ArithmeticException => throw wrong(shape, p, ", not a whole number a long holds") }
            case _ => throw wrong(shape, p)
          }
      case NumberKind => p =>
          p.currentToken match {
            case VALUE_NUMBER_INT | VALUE_NUMBER_FLOAT => p.getDoubleValue
            case _ => throw wrong(shape, p)
          }
      case BooleanKind => p =>
          p.currentToken match {
            case VALUE_TRUE => true
            case VALUE_FALSE => false
            case _ => throw wrong(shape, p)
          }
      case NullKind => p => throw wrong(shape, p)
      case RawKind => new RawRead(factory)
      case kind: ObjectKind => new ObjectRead(shape, kind, factory)
      case MapKind(values) => new MapRead(shape, readerOf(values, values.nullable, factory))
      case ArrayKind(items) => new ArrayRead(shape, readerOf(items, items.nullable, factory))
    }
    p =>
      if (p.currentToken != VALUE_NULL) value(p)
      else if (nullOk) null
      else throw new JsonSchemaConversionException(s"null at ${shape.path}, where the schema allows no null")
  }

  /**
   * Writes the value the parser is on to `g` as compact JSON, numbers exactly as written; leaves the parser on the
   * value's last token.
   */
  private[jsonschema] def copy(p: JsonParser, g: JsonGenerator): Unit = {
    var depth = 0
    var more = true
    while (more) {
      p.currentToken match {
        case START_OBJECT => g.writeStartObject(); depth += 1
        case START_ARRAY => g.writeStartArray(); depth += 1
        case END_OBJECT => g.writeEndObject(); depth -= 1
        case END_ARRAY => g.writeEndArray(); depth -= 1
        case FIELD_NAME => g.writeFieldName(p.currentName)
        case VALUE_STRING => g.writeString(p.getTextCharacters, p.getTextOffset, p.getTextLength)
        case VALUE_NUMBER_INT | VALUE_NUMBER_FLOAT => g.writeNumber(p.getText)
        case VALUE_TRUE => g.writeBoolean(true)
        case VALUE_FALSE => g.writeBoolean(false)
        case VALUE_NULL => g.writeNull()
        case other => throw new JsonSchemaConversionException(s"unexpected JSON token $other")
      }
      if (depth > 0) p.nextToken() else more = false
    }
  }

  /** The value's JSON text. */
  private final class RawRead(factory: JsonFactory) extends Read {
    private val out = new ByteArrayOutputStream(128)
    def apply(p: JsonParser): Any = {
      out.reset()
      val g = factory.createGenerator(out, JsonEncoding.UTF8)
      copy(p, g)
      g.close()
      UTF8String.fromBytes(out.toByteArray)
    }
  }

  /** Fails unless the parser is on `token`. */
  private def expect(p: JsonParser, token: JsonToken, shape: Shape): Unit =
    if (p.currentToken != token) throw wrong(shape, p)

  /** An object as a row: each known property by the index of its name, the others skipped. */
  private final class ObjectRead(shape: Shape, kind: ObjectKind, factory: JsonFactory) extends Read {
    private val properties = kind.properties
    private val index = new java.util.HashMap[String, Integer]()
    properties.indices.foreach(i => index.put(properties(i).name, Integer.valueOf(i)))
    private val fields: Array[Read] = properties.map(f => readerOf(f.shape, f.sparkNullable, factory)).toArray
    // The fields that may not be null: a missing one (the parser let no null through) is an error.
    private val notNull: Array[Int] = properties.indices.filterNot(i => properties(i).sparkNullable).toArray

    def apply(p: JsonParser): Any = {
      expect(p, START_OBJECT, shape)
      val values = new Array[Any](fields.length)
      while (p.nextToken() == FIELD_NAME) {
        val i = index.get(p.currentName)
        p.nextToken()
        if (i == null) p.skipChildren() else values(i) = fields(i)(p)
      }
      var j = 0
      while (j < notNull.length) {
        if (values(notNull(j)) == null)
          throw new JsonSchemaConversionException(s"the required property '${properties(notNull(j)).name}' is " +
            s"missing at ${shape.path}")
        j += 1
      }
      new GenericInternalRow(values)
    }
  }

  /** Collects items in a buffer reused between values, copied out at the end. */
  private abstract class Buffer {
    protected var buffer = new Array[Any](16)
    protected def grow(): Unit = buffer = larger(buffer)
    protected def larger(a: Array[Any]): Array[Any] = {
      val bigger = new Array[Any](a.length * 2)
      System.arraycopy(a, 0, bigger, 0, a.length)
      bigger
    }
    protected def take(buf: Array[Any], count: Int): GenericArrayData = {
      val items = new Array[Any](count)
      System.arraycopy(buf, 0, items, 0, count)
      new GenericArrayData(items)
    }
  }

  /** An array's items, in order. */
  private final class ArrayRead(shape: Shape, readItem: Read) extends Buffer with Read {
    def apply(p: JsonParser): Any = {
      expect(p, START_ARRAY, shape)
      var count = 0
      while (p.nextToken() != END_ARRAY) {
        if (count == buffer.length) grow()
        buffer(count) = readItem(p)
        count += 1
      }
      take(buffer, count)
    }
  }

  /** An object's properties as a map, in the order written; a name written twice keeps its last value. */
  private final class MapRead(shape: Shape, readValue: Read) extends Buffer with Read {
    private var keys = new Array[Any](16)
    private val seen = new java.util.HashMap[String, Integer]()
    def apply(p: JsonParser): Any = {
      expect(p, START_OBJECT, shape)
      seen.clear()
      var count = 0
      while (p.nextToken() == FIELD_NAME) {
        val key = p.currentName
        p.nextToken()
        val value = readValue(p)
        val before = seen.put(key, Integer.valueOf(count))
        if (before != null) { buffer(before.intValue) = value; seen.put(key, before) }
        else {
          if (count == buffer.length) { grow(); keys = larger(keys) }
          keys(count) = UTF8String.fromString(key)
          buffer(count) = value
          count += 1
        }
      }
      new ArrayBasedMapData(take(keys, count), take(buffer, count))
    }
  }
}
