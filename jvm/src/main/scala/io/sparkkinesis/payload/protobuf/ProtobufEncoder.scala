package io.sparkkinesis.payload.protobuf

import java.io.ByteArrayOutputStream

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.util.{ArrayData, MapData}
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

import ProtoSchema._
import io.sparkkinesis.wire.{Wire, WireWriter}
import ProtobufTypes._
import io.sparkkinesis.errors.FieldPath._

/**
 * Converts Catalyst values of `sparkType` (a struct) to the body of a Glue Schema Registry Protobuf frame for
 * message `message` of `schema`: its message index as a varint, then the message's bytes; the reverse of
 * [[ProtobufDecoder]]. Struct fields fill the message's fields by name (a message field the struct lacks is not
 * written, so it reads as its default); repeated numeric fields are written packed in proto3 (and where `packed`
 * says so), and a proto3 field without a label is not written when it holds its default, as protobuf does. The
 * writing is planned once, here, which checks that the types fit: a [[ProtobufConversionException]] names the
 * first field that does not. Values that do not fit (a null in a required field or an array, a number out of the
 * field's range, an unknown enum name, two members of a oneof) throw when met. Not thread-safe (one per task or
 * thread): it reuses its buffers between calls.
 */
private[sparkkinesis] final class ProtobufEncoder(sparkType: DataType, schema: ProtoSchema, message: String) {
  private val m = schema.message(message)
  private val index = schema.indexOf(m.fullName)
  private val write = sparkType match {
    case struct: StructType => new ProtobufEncoder.MessageWrite(struct, schema, m, "")
    case other => throw new ProtobufConversionException(s"cannot write Spark ${other.simpleString} as Protobuf " +
        s"message ${m.fullName}: a message is written from a struct")
  }
  private val out = new ByteArrayOutputStream(256)

  /** The frame body of `value`, a row of `sparkType`. */
  def encode(value: Any): Array[Byte] = {
    if (value == null) throw new ProtobufConversionException(s"a null row for Protobuf message ${m.fullName}")
    out.reset()
    WireWriter.varint(out, index.toLong)
    write.write(out, value.asInstanceOf[InternalRow])
    out.toByteArray
  }
}

private[sparkkinesis] object ProtobufEncoder {

  /** Writes the fields of a message (no tag, no length) from a row: one writer per struct field. */
  private final class MessageWrite(struct: StructType, schema: ProtoSchema, m: Message, path: String) {
    private val writers: Array[(ByteArrayOutputStream, InternalRow) => Unit] = struct.fields.indices.map { i =>
      val sf = struct(i)
      val f = m.field(sf.name).getOrElse(throw new ProtobufConversionException(s"Spark field " +
          s"'${field(path, sf.name)}' is not in the Protobuf message ${m.fullName} (fields: " +
          m.fields.map(_.name).mkString(", ") + ")"))
      fieldWriter(sf.dataType, i, f, schema, field(path, sf.name))
    }.toArray
    // The struct positions of the members of each oneof, when the struct has two or more of them.
    private val oneofs: Array[Array[Int]] = struct.fields.indices.filter(i => m.field(struct(i).name).get.oneof != null)
      .groupBy(i => m.field(struct(i).name).get.oneof).values.filter(_.size > 1).map(_.toArray).toArray

    def write(out: ByteArrayOutputStream, row: InternalRow): Unit = {
      var i = 0
      while (i < oneofs.length) {
        val set = oneofs(i).filter(j => !row.isNullAt(j))
        if (set.length > 1)
          throw new ProtobufConversionException(set.map(j => s"'${field(path, struct(j).name)}'").mkString(" and ") +
            s" are set, members of oneof ${m.field(struct(set(0)).name).get.oneof}: at most one may be")
        i += 1
      }
      i = 0
      while (i < writers.length) { writers(i)(out, row); i += 1 }
    }
  }

  /** Writes field `f` from position `i` of the row, whose Spark type is `dt`. */
  private def fieldWriter(
      dt: DataType,
      i: Int,
      f: Field,
      schema: ProtoSchema,
      path: String): (ByteArrayOutputStream, InternalRow) => Unit = {
    val get = InternalRow.getAccessor(dt, nullable = true)
    (f.fieldType, dt) match {
      case (MapOf(k, v, _), MapType(kt, vt, _)) =>
        val (key, value) = (valueWriter(kt, k, schema, path), valueWriter(vt, v, schema, mapValue(path)))
        val (getKey, getValue) = (InternalRow.getAccessor(kt, nullable = true), InternalRow.getAccessor(vt, true))
        val entry = new ByteArrayOutputStream(64)
        (out, row) =>
          if (!row.isNullAt(i)) {
            val map = get(row, i).asInstanceOf[MapData]
            val (keys, values) = (map.keyArray(), map.valueArray())
            var j = 0
            while (j < map.numElements()) {
              entry.reset()
              key.tagged(entry, 1, getKey(keys, j))
              if (!values.isNullAt(j)) value.tagged(entry, 2, getValue(values, j))
              WireWriter.tag(out, f.number, Wire.LengthDelimited)
              WireWriter.varint(out, entry.size.toLong)
              entry.writeTo(out)
              j += 1
            }
          }
      case (t, ArrayType(et, _)) if f.repeated =>
        val item = valueWriter(et, t, schema, element(path))
        val getItem = InternalRow.getAccessor(et, nullable = true)
        val packed = if (writesPacked(schema.syntax, f)) new ByteArrayOutputStream(64) else null
        (out, row) =>
          if (!row.isNullAt(i)) {
            val items = get(row, i).asInstanceOf[ArrayData]
            val n = items.numElements()
            if (packed != null) packed.reset()
            var j = 0
            while (j < n) {
              if (items.isNullAt(j)) throw new ProtobufConversionException(s"null at ${at(element(path))}: a " +
                "repeated Protobuf field has no null elements")
              if (packed != null) item.write(packed, getItem(items, j))
              else item.tagged(out, f.number, getItem(items, j))
              j += 1
            }
            if (packed != null && n > 0) {
              WireWriter.tag(out, f.number, Wire.LengthDelimited)
              WireWriter.varint(out, packed.size.toLong)
              packed.writeTo(out)
            }
          }
      case (t, _) if !f.repeated =>
        val value = valueWriter(dt, t, schema, path)
        val skipDefault = f.label == Implicit
        (out, row) =>
          if (row.isNullAt(i)) {
            if (f.label == Required)
              throw new ProtobufConversionException(s"null at ${at(path)}, a required Protobuf field")
          } else {
            val v = get(row, i)
            if (!skipDefault || !value.isDefault(v)) value.tagged(out, f.number, v)
          }
      case _ =>
        throw new ProtobufConversionException(s"cannot write Spark ${dt.simpleString} at ${at(path)} as Protobuf " +
          s"${describe(f)}")
    }
  }

  /** Writes one value (not null) of a Protobuf type from its Catalyst form, without or with its tag. */
  private abstract class ValueWrite(val wire: Int) {
    def write(out: ByteArrayOutputStream, v: Any): Unit
    def isDefault(v: Any): Boolean
    def tagged(out: ByteArrayOutputStream, number: Int, v: Any): Unit = {
      WireWriter.tag(out, number, wire)
      write(out, v)
    }
  }

  /** A varint, fixed32 or fixed64 value: `bits` are what the wire holds (zigzag applied, a float's bits, ...). */
  private final class Numeric(wire: Int, bits: Any => Long) extends ValueWrite(wire) {
    def write(out: ByteArrayOutputStream, v: Any): Unit = wire match {
      case Wire.Varint => WireWriter.varint(out, bits(v))
      case Wire.Fixed32 => WireWriter.fixed32(out, bits(v).toInt)
      case _ => WireWriter.fixed64(out, bits(v))
    }
    def isDefault(v: Any): Boolean = bits(v) == 0L
  }

  private object Text extends ValueWrite(Wire.LengthDelimited) {
    def write(out: ByteArrayOutputStream, v: Any): Unit = {
      val s = v.asInstanceOf[UTF8String]
      WireWriter.varint(out, s.numBytes.toLong)
      s.writeTo(out)
    }
    def isDefault(v: Any): Boolean = v.asInstanceOf[UTF8String].numBytes == 0
  }

  private object Binary extends ValueWrite(Wire.LengthDelimited) {
    def write(out: ByteArrayOutputStream, v: Any): Unit = {
      val b = v.asInstanceOf[Array[Byte]]
      WireWriter.varint(out, b.length.toLong)
      out.write(b, 0, b.length)
    }
    def isDefault(v: Any): Boolean = v.asInstanceOf[Array[Byte]].length == 0
  }

  /** A sub-message: written to its own buffer first, for its length. */
  private final class Nested(message: MessageWrite) extends ValueWrite(Wire.LengthDelimited) {
    private val buffer = new ByteArrayOutputStream(64)
    def write(out: ByteArrayOutputStream, v: Any): Unit = {
      buffer.reset()
      message.write(buffer, v.asInstanceOf[InternalRow])
      WireWriter.varint(out, buffer.size.toLong)
      buffer.writeTo(out)
    }
    def isDefault(v: Any): Boolean = false
  }

  private def valueWriter(dt: DataType, t: FieldType, schema: ProtoSchema, path: String): ValueWrite = {
    def mismatch = new ProtobufConversionException(s"cannot write Spark ${dt.simpleString} at ${at(path)} as " +
      s"Protobuf ${t match { case Scalar(n) => n; case EnumRef(n) => s"enum $n"; case other => other.toString }}")
    (t, dt) match {
      case (Scalar("string"), StringType) => Text
      case (Scalar("bytes"), BinaryType) => Binary
      case (Scalar("bool"), BooleanType) => new Numeric(Wire.Varint, v => if (v.asInstanceOf[Boolean]) 1L else 0L)
      case (Scalar("float"), FloatType) =>
        new Numeric(Wire.Fixed32, v => java.lang.Float.floatToRawIntBits(v.asInstanceOf[Float]) & 0xFFFFFFFFL)
      case (Scalar("double"), FloatType | DoubleType) =>
        val toDouble: Any => Double =
          if (dt == FloatType) _.asInstanceOf[Float].toDouble else _.asInstanceOf[Double]
        new Numeric(Wire.Fixed64, v => java.lang.Double.doubleToRawLongBits(toDouble(v)))
      case (Scalar(name), _) =>
        val toLong = ProtobufNumbers.integral(dt, name, path).getOrElse(throw mismatch)
        new Numeric(wireType(t), ProtobufNumbers.bits(name, dt, toLong, path))
      case (EnumRef(name), StringType | IntegerType) =>
        new Numeric(Wire.Varint, ProtobufNumbers.enumNumber(dt, schema.enumNamed(name), path))
      case (MessageRef(name), struct: StructType) =>
        new Nested(new MessageWrite(struct, schema, schema.messageNamed(name), path))
      case _ => throw mismatch
    }
  }
}
