package io.sparkkinesis.payload.avro

import java.math.{BigDecimal => JBigDecimal, BigInteger}
import java.nio.ByteBuffer

import scala.util.control.NonFatal

import io.sparkkinesis.compat.CollectionConverters._

import org.apache.avro.{LogicalTypes, Schema}
import org.apache.avro.Schema.Type._
import org.apache.avro.io.{BinaryDecoder, Decoder, DecoderFactory, ResolvingDecoder}
import org.apache.avro.util.Utf8
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.catalyst.util.{ArrayBasedMapData, GenericArrayData}
import org.apache.spark.sql.types.Decimal
import org.apache.spark.unsafe.types.UTF8String

import AvroTypes._
import io.sparkkinesis.errors.FieldPath._

/**
 * Decodes Avro binary datums written with `writer` as values of `reader` (Avro's schema resolution: fields added
 * with a default, fields dropped, int to long and the other promotions), to Catalyst values of
 * `AvroTypes.sparkType(reader)`: an `InternalRow` for a record.
 *
 * The reading is planned once, here: a function per field of the reader schema, which reads the field's value off
 * Avro's decoder straight into its Catalyst form, with no generic Avro object in between and no look at the schema
 * per record. Avro's `ResolvingDecoder` maps the writer's datum to the reader schema; when both schemas are the same
 * (the usual case) the functions read the binary decoder directly, without the resolver's bookkeeping per value.
 * Not thread-safe (one per task or thread): it reuses its decoders and buffers between calls, never in what it
 * returns, so a returned row stays valid after the next call.
 */
private[sparkkinesis] final class AvroDecoder(writer: Schema, reader: Schema) {
  // Fails early, with the field's path, on a reader schema Spark cannot hold (recursive, decimal(40, 0), ...).
  AvroTypes.sparkType(reader)

  // Null when the schemas are equal: nothing to resolve.
  private val resolver: ResolvingDecoder =
    if (writer == reader) null else DecoderFactory.get().resolvingDecoder(writer, reader, null)
  private val read: AvroDecoder.Read = AvroDecoder.readerOf(reader, "", resolver != null)
  private var binary: BinaryDecoder = _

  /** The value of the datum in `bytes(offset until offset + length)`; a wrong or truncated datum throws. */
  def decode(bytes: Array[Byte], offset: Int, length: Int): Any = {
    binary = DecoderFactory.get().binaryDecoder(bytes, offset, length, binary)
    try {
      if (resolver == null) read(binary)
      else {
        resolver.configure(binary)
        val value = read(resolver)
        resolver.drain()
        value
      }
    } catch {
      case e: AvroConversionException => throw e
      case NonFatal(e) =>
        throw new AvroConversionException(s"cannot decode $length bytes as Avro ${describe(writer)} read as " +
            s"${describe(reader)}: $e", e)
    }
  }
}

private[sparkkinesis] object AvroDecoder {

  /** Reads one value of a schema off the decoder, in its Catalyst form. */
  private type Read = Decoder => Any

  /** The reader of `schema`'s values; `resolving`: off a `ResolvingDecoder`, which may reorder a record's fields. */
  private def readerOf(schema: Schema, path: String, resolving: Boolean): Read =
    (schema.getType, logicalName(schema)) match {
      case (NULL, _) => in => { in.readNull(); null }
      case (BOOLEAN, _) => in => in.readBoolean()
      case (INT, _) => in => in.readInt() // date (days) and time-millis are ints as they are
      case (LONG, "timestamp-millis" | "local-timestamp-millis") => in => Math.multiplyExact(in.readLong(), 1000L)
      case (LONG, _) => in => in.readLong()
      case (FLOAT, _) => in => in.readFloat()
      case (DOUBLE, _) => in => in.readDouble()
      case (STRING, _) => new StringRead
      case (ENUM, _) =>
        val symbols = schema.getEnumSymbols.asScala.map(UTF8String.fromString).toArray
        in => symbols(in.readEnum())
      case (BYTES | FIXED, "decimal") => new DecimalRead(schema, path)
      case (BYTES, _) => new BytesRead
      case (FIXED, _) =>
        val size = schema.getFixedSize
        in => { val b = new Array[Byte](size); in.readFixed(b, 0, size); b }
      case (RECORD, _) =>
        new RecordRead(schema.getFields.asScala.map(f => readerOf(f.schema, field(path, f.name), resolving)).toArray,
          resolving)
      case (ARRAY, _) => new ArrayRead(readerOf(schema.getElementType, element(path), resolving))
      case (MAP, _) => new MapRead(readerOf(schema.getValueType, mapValue(path), resolving))
      case (UNION, _) => unionReader(schema, path, resolving)
      case (other, _) => throw new AvroConversionException(s"Avro type $other at ${at(path)} has no Spark type")
    }

  /** A reader per branch of the union, chosen by the branch index the datum carries. */
  private def unionReader(union: Schema, path: String, resolving: Boolean): Read = {
    val kind = unionKind(union)
    val readNull: Read = in => { in.readNull(); null }
    val branches: Array[Read] = union.getTypes.asScala.map { t =>
      (t.getType, kind) match {
        case (NULL, _) => readNull
        case (INT, Longs) => (in: Decoder) => in.readInt().toLong
        case (FLOAT, Doubles) => (in: Decoder) => in.readFloat().toDouble
        case (_, Members(members)) =>
          val m = members.indexOf(t)
          new MemberRead(m, members.size, readerOf(t, field(path, memberName(m)), resolving))
        case _ => readerOf(t, path, resolving) // the one type besides null, a long, a double
      }
    }.toArray
    in => branches(in.readIndex())(in)
  }

  /** A string, copied out of the `Utf8` the decoder reuses (`UTF8String.fromBytes` wraps, it does not copy). */
  private final class StringRead extends Read {
    private val reuse = new Utf8()
    def apply(in: Decoder): Any = {
      val s = in.readString(reuse)
      UTF8String.fromBytes(java.util.Arrays.copyOf(s.getBytes, s.getByteLength))
    }
  }

  /** Bytes, copied out of the buffer the decoder reuses. */
  private final class BytesRead extends Read {
    private var reuse: ByteBuffer = _
    def apply(in: Decoder): Any = {
      reuse = in.readBytes(reuse)
      val b = new Array[Byte](reuse.remaining)
      reuse.get(b)
      b
    }
  }

  /** A Decimal from its two's complement unscaled value, in bytes or in a fixed. */
  private final class DecimalRead(schema: Schema, path: String) extends Read {
    private val decimal = schema.getLogicalType.asInstanceOf[LogicalTypes.Decimal]
    private val precision = decimal.getPrecision
    private val scale = decimal.getScale
    private val fixed = if (schema.getType == FIXED) new Array[Byte](schema.getFixedSize) else null
    private var reuse: ByteBuffer = _

    def apply(in: Decoder): Any =
      if (fixed != null) {
        in.readFixed(fixed, 0, fixed.length)
        toDecimal(fixed, 0, fixed.length)
      } else {
        reuse = in.readBytes(reuse)
        if (reuse.hasArray) toDecimal(reuse.array, reuse.arrayOffset + reuse.position(), reuse.remaining)
        else { val b = new Array[Byte](reuse.remaining); reuse.get(b); toDecimal(b, 0, b.length) }
      }

    private def toDecimal(b: Array[Byte], offset: Int, length: Int): Decimal =
      if (length <= 8 && precision <= Decimal.MAX_LONG_DIGITS) {
        var unscaled = if (length == 0) 0L else b(offset).toLong // sign-extended
        var i = 1
        while (i < length) { unscaled = (unscaled << 8) | (b(offset + i) & 0xFF); i += 1 }
        val bound = AvroDecoder.powersOf10(precision)
        if (unscaled <= -bound || unscaled >= bound) throw overflow(JBigDecimal.valueOf(unscaled, scale))
        Decimal.createUnsafe(unscaled, precision, scale)
      } else {
        val value = new JBigDecimal(if (length == 0) BigInteger.ZERO else new BigInteger(b, offset, length), scale)
        if (value.precision > precision) throw overflow(value)
        Decimal(value, precision, scale)
      }

    private def overflow(value: JBigDecimal) = new AvroConversionException(
      s"the Avro decimal $value at ${at(path)} has more digits than decimal($precision, $scale) holds")
  }

  /** A record as a row, its fields in the reader schema's order whatever order the writer wrote them in. */
  private final class RecordRead(fields: Array[Read], resolving: Boolean) extends Read {
    def apply(in: Decoder): Any = {
      val values = new Array[Any](fields.length)
      if (resolving) {
        val order = in.asInstanceOf[ResolvingDecoder].readFieldOrder()
        var i = 0
        while (i < order.length) {
          val pos = order(i).pos
          values(pos) = fields(pos)(in)
          i += 1
        }
      } else {
        var i = 0
        while (i < fields.length) { values(i) = fields(i)(in); i += 1 }
      }
      new GenericInternalRow(values)
    }
  }

  /** One branch of a union of several types: a struct of members with that member set. */
  private final class MemberRead(member: Int, members: Int, readMember: Read) extends Read {
    def apply(in: Decoder): Any = {
      val values = new Array[Any](members)
      values(member) = readMember(in)
      new GenericInternalRow(values)
    }
  }

  /** Collects the items of an array or map, block after block, in a buffer reused between values. */
  private abstract class Blocks {
    protected var buffer = new Array[Any](16)
    protected def grow(): Unit = {
      val bigger = new Array[Any](buffer.length * 2)
      System.arraycopy(buffer, 0, bigger, 0, buffer.length)
      buffer = bigger
    }
    protected def take(buf: Array[Any], count: Int): GenericArrayData = {
      val items = new Array[Any](count)
      System.arraycopy(buf, 0, items, 0, count)
      new GenericArrayData(items)
    }
  }

  private final class ArrayRead(readItem: Read) extends Blocks with Read {
    def apply(in: Decoder): Any = {
      var count = 0
      var block = in.readArrayStart()
      while (block > 0) {
        var i = 0L
        while (i < block) {
          if (count == buffer.length) grow()
          buffer(count) = readItem(in)
          count += 1
          i += 1
        }
        block = in.arrayNext()
      }
      take(buffer, count)
    }
  }

  /** A map's keys (strings) and values, in the order written. */
  private final class MapRead(readValue: Read) extends Blocks with Read {
    private val readKey = new StringRead
    private var keys = new Array[Any](16)
    def apply(in: Decoder): Any = {
      var count = 0
      var block = in.readMapStart()
      while (block > 0) {
        var i = 0L
        while (i < block) {
          if (count == buffer.length) {
            grow()
            val more = new Array[Any](buffer.length)
            System.arraycopy(keys, 0, more, 0, count)
            keys = more
          }
          keys(count) = readKey(in)
          buffer(count) = readValue(in)
          count += 1
          i += 1
        }
        block = in.mapNext()
      }
      new ArrayBasedMapData(take(keys, count), take(buffer, count))
    }
  }

  private val powersOf10: Array[Long] = Array.iterate(1L, 19)(_ * 10)
}
