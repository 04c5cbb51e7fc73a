package io.sparkkinesis.payload.avro

import java.io.ByteArrayOutputStream
import java.math.RoundingMode

import io.sparkkinesis.compat.CollectionConverters._

import org.apache.avro.{LogicalTypes, Schema}
import org.apache.avro.Schema.Type._
import org.apache.avro.generic.{GenericData, GenericDatumWriter}
import org.apache.avro.io.{BinaryEncoder, Encoder, EncoderFactory}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.util.{ArrayData, MapData}
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

import AvroTypes._
import io.sparkkinesis.errors.FieldPath._

/**
 * Converts Catalyst values of `sparkType` to Avro binary datums of `schema`, the reverse of [[AvroDecoder]]. A
 * struct fills a record by field name (the record may order its fields otherwise; a record field the struct lacks
 * takes its default), a struct of members (`member0`, ...) a union of several types. The writing is planned once,
 * here, which checks that the types fit: an [[AvroConversionException]] names the first field that does not. Values
 * that do not fit (a null where the schema has no null, an unknown enum symbol, a decimal too large) throw when met.
 * Not thread-safe (one per task or thread): it reuses its encoder and buffer between calls.
 */
private[sparkkinesis] final class AvroEncoder(sparkType: DataType, schema: Schema) {
  private val write: AvroEncoder.Write = AvroEncoder.writerOf(sparkType, schema, "")
  private val out = new ByteArrayOutputStream(256)
  private var encoder: BinaryEncoder = _

  /** The Avro binary datum of `value` (null where the schema allows it). */
  def encode(value: Any): Array[Byte] = {
    // Configuring the encoder flushes what a failed call left in it; the reset then drops that too.
    encoder = EncoderFactory.get().binaryEncoder(out, encoder)
    out.reset()
    write(encoder, value)
    encoder.flush()
    out.toByteArray
  }
}

private[sparkkinesis] object AvroEncoder {

  /** Writes one value (possibly null) of a Spark type as a datum of an Avro schema. */
  private type Write = (Encoder, Any) => Unit

  private def writerOf(dt: DataType, schema: Schema, path: String): Write = schema.getType match {
    case UNION => unionWriter(dt, schema, path)
    case NULL if dt == NullType =>
      (_, v) => if (v != null) throw new AvroConversionException(s"a value at ${at(path)}, whose Avro type is null")
    case _ =>
      val w = valueWriter(dt, schema, path)
      (enc, v) => if (v == null) throw nullAt(path, schema) else w(enc, v)
  }

  private def nullAt(path: String, schema: Schema) =
    new AvroConversionException(s"null at ${at(path)}, whose Avro type ${describe(schema)} has no null")

  /** Writes a value that is not null. */
  private def valueWriter(dt: DataType, schema: Schema, path: String): Write =
    (schema.getType, logicalName(schema), dt) match {
      case (BOOLEAN, _, BooleanType) => (enc, v) => enc.writeBoolean(v.asInstanceOf[Boolean])
      case (INT, "date", DateType) => (enc, v) => enc.writeInt(v.asInstanceOf[Int])
      case (INT | LONG, name, small @ (ByteType | ShortType | IntegerType)) if name != "date" && !isTimestamp(name) =>
        val toInt: Any => Int = small match {
          case ByteType => _.asInstanceOf[Byte].toInt
          case ShortType => _.asInstanceOf[Short].toInt
          case _ => _.asInstanceOf[Int]
        }
        if (schema.getType == INT) (enc, v) => enc.writeInt(toInt(v)) else (enc, v) => enc.writeLong(toInt(v).toLong)
      case (LONG, name, LongType) if !isTimestamp(name) => (enc, v) => enc.writeLong(v.asInstanceOf[Long])
      case (LONG, "timestamp-millis", TimestampType) | (LONG, "local-timestamp-millis", TimestampNTZType) =>
        (enc, v) => enc.writeLong(Math.floorDiv(v.asInstanceOf[Long], 1000L))
      case (LONG, "timestamp-micros", TimestampType) | (LONG, "local-timestamp-micros", TimestampNTZType) =>
        (enc, v) => enc.writeLong(v.asInstanceOf[Long])
      case (FLOAT, _, FloatType) => (enc, v) => enc.writeFloat(v.asInstanceOf[Float])
      case (DOUBLE, _, FloatType) => (enc, v) => enc.writeDouble(v.asInstanceOf[Float].toDouble)
      case (DOUBLE, _, DoubleType) => (enc, v) => enc.writeDouble(v.asInstanceOf[Double])
      // A string's encoding is that of bytes: the length, then the UTF-8 bytes.
      case (STRING, _, StringType) => (enc, v) => enc.writeBytes(v.asInstanceOf[UTF8String].getBytes)
      case (ENUM, _, StringType) => enumWriter(schema, path)
      case (BYTES | FIXED, "decimal", _: DecimalType) => decimalWriter(schema, path)
      case (BYTES, name, BinaryType) if name != "decimal" => (enc, v) => enc.writeBytes(v.asInstanceOf[Array[Byte]])
      case (FIXED, name, BinaryType) if name != "decimal" =>
        val size = schema.getFixedSize
        (enc, v) => {
          val b = v.asInstanceOf[Array[Byte]]
          if (b.length != size)
            throw new AvroConversionException(s"${b.length} bytes at ${at(path)}, whose Avro ${describe(schema)} " +
              s"holds exactly $size")
          enc.writeFixed(b)
        }
      case (RECORD, _, struct: StructType) => recordWriter(struct, schema, path)
      case (ARRAY, _, ArrayType(items, _)) =>
        val get = InternalRow.getAccessor(items, nullable = true)
        val w = writerOf(items, schema.getElementType, element(path))
        (enc, v) => {
          val a = v.asInstanceOf[ArrayData]
          val n = a.numElements()
          enc.writeArrayStart()
          enc.setItemCount(n.toLong)
          var i = 0
          while (i < n) { enc.startItem(); w(enc, get(a, i)); i += 1 }
          enc.writeArrayEnd()
        }
      case (MAP, _, MapType(StringType, values, _)) =>
        val get = InternalRow.getAccessor(values, nullable = true)
        val w = writerOf(values, schema.getValueType, mapValue(path))
        (enc, v) => {
          val m = v.asInstanceOf[MapData]
          val (keys, vals, n) = (m.keyArray(), m.valueArray(), m.numElements())
          enc.writeMapStart()
          enc.setItemCount(n.toLong)
          var i = 0
          while (i < n) {
            enc.startItem(); enc.writeBytes(keys.getUTF8String(i).getBytes); w(enc, get(vals, i)); i += 1
          }
          enc.writeMapEnd()
        }
      case _ =>
        throw new AvroConversionException(
          s"cannot write Spark ${dt.simpleString} at ${at(path)} as Avro ${describe(schema)}")
    }

  private def isTimestamp(logicalName: String): Boolean =
    logicalName != null && logicalName.contains("timestamp-m")

  /** Each record field from the struct's field of that name, or its default; the struct may have no other field. */
  private def recordWriter(struct: StructType, schema: Schema, path: String): Write = {
    val extra = struct.fieldNames.filter(n => schema.getField(n) == null)
    if (extra.nonEmpty)
      throw new AvroConversionException(s"Spark field '${field(path, extra.head)}' is not in the Avro record " +
        s"${schema.getFullName} (fields: ${schema.getFields.asScala.map(_.name).mkString(", ")})")
    val index = struct.fieldNames.zipWithIndex.toMap
    val fields: Array[(Encoder, InternalRow) => Unit] = schema.getFields.asScala.map { f =>
      val fieldPath = field(path, f.name)
      index.get(f.name) match {
        case Some(i) =>
          val get = InternalRow.getAccessor(struct(i).dataType, nullable = true)
          val w = writerOf(struct(i).dataType, f.schema, fieldPath)
          (enc: Encoder, row: InternalRow) => w(enc, get(row, i))
        case None if f.hasDefaultValue =>
          val bytes = defaultDatum(f)
          (enc: Encoder, _: InternalRow) => enc.writeFixed(bytes)
        case None =>
          throw new AvroConversionException(s"the Avro field '$fieldPath' has no default and the Spark struct " +
            "has no field of that name")
      }
    }.toArray
    (enc, v) => {
      val row = v.asInstanceOf[InternalRow]
      var i = 0
      while (i < fields.length) { fields(i)(enc, row); i += 1 }
    }
  }

  /** The binary datum of a field's default value, written once by Avro itself. */
  private def defaultDatum(f: Schema.Field): Array[Byte] = {
    val out = new ByteArrayOutputStream()
    val enc = EncoderFactory.get().directBinaryEncoder(out, null)
    new GenericDatumWriter[Any](f.schema).write(GenericData.get().getDefaultValue(f), enc)
    out.toByteArray
  }

  /** A union: the null branch for null, else the member a struct of members sets, else the first type that fits. */
  private def unionWriter(dt: DataType, union: Schema, path: String): Write = {
    val types = union.getTypes.asScala.toIndexedSeq
    val nullIndex = types.indexWhere(_.getType == NULL)
    val branches = types.indices.filter(_ != nullIndex)
    val writeNull: Write = (enc, _) => {
      if (nullIndex < 0) throw nullAt(path, union)
      enc.writeIndex(nullIndex)
    }
    dt match {
      case struct: StructType if branches.size > 1 && struct.fieldNames.toSeq == branches.indices.map(memberName) =>
        val members = branches.indices.map { m =>
          val get = InternalRow.getAccessor(struct(m).dataType, nullable = true)
          (get, valueWriter(struct(m).dataType, types(branches(m)), field(path, memberName(m))))
        }.toArray
        (enc, v) =>
          if (v == null) writeNull(enc, v)
          else {
            val row = v.asInstanceOf[InternalRow]
            val set = members.indices.filter(m => !row.isNullAt(m))
            if (set.size > 1)
              throw new AvroConversionException(s"${set.map(memberName).mkString(" and ")} are set at ${at(path)}, " +
                "a union: at most one member may be")
            if (set.isEmpty) writeNull(enc, v)
            else {
              val (get, w) = members(set.head)
              enc.writeIndex(branches(set.head))
              w(enc, get(row, set.head))
            }
          }
      case NullType => writeNull
      case _ =>
        val fits = branches.iterator.map { i =>
          try Some(i -> valueWriter(dt, types(i), path))
          catch { case _: AvroConversionException => None }
        }.collectFirst { case Some(found) => found }
        val (index, w) = fits.getOrElse(throw new AvroConversionException(
            s"cannot write Spark ${dt.simpleString} at ${at(path)} as any type of the Avro union " +
              types.map(describe).mkString("[", ", ", "]")))
        (enc, v) => if (v == null) writeNull(enc, v) else { enc.writeIndex(index); w(enc, v) }
    }
  }

  private def enumWriter(schema: Schema, path: String): Write = {
    val symbols = schema.getEnumSymbols.asScala
    val index = new java.util.HashMap[UTF8String, Integer]()
    symbols.zipWithIndex.foreach { case (s, i) => index.put(UTF8String.fromString(s), Integer.valueOf(i)) }
    (enc, v) => {
      val i = index.get(v)
      if (i == null)
        throw new AvroConversionException(s"'$v' at ${at(path)} is not a symbol of the Avro enum " +
          s"${schema.getFullName} (${symbols.mkString(", ")})")
      enc.writeEnum(i.intValue)
    }
  }

  /** The unscaled value at the schema's scale (rounded half up), in two's complement, big-endian. */
  private def decimalWriter(schema: Schema, path: String): Write = {
    val decimal = schema.getLogicalType.asInstanceOf[LogicalTypes.Decimal]
    val (precision, scale) = (decimal.getPrecision, decimal.getScale)
    val size = if (schema.getType == FIXED) schema.getFixedSize else -1
    (enc, v) => {
      val value = v.asInstanceOf[Decimal].toJavaBigDecimal.setScale(scale, RoundingMode.HALF_UP)
      val unscaled = value.unscaledValue.toByteArray
      if (value.precision > precision || (size >= 0 && unscaled.length > size))
        throw new AvroConversionException(s"the decimal $value at ${at(path)} has more digits than the Avro " +
          s"${describe(schema)} holds (precision $precision, scale $scale)")
      if (size < 0) enc.writeBytes(unscaled)
      else {
        val padded = new Array[Byte](size)
        if (unscaled(0) < 0) java.util.Arrays.fill(padded, 0, size - unscaled.length, -1.toByte)
        System.arraycopy(unscaled, 0, padded, size - unscaled.length, unscaled.length)
        enc.writeFixed(padded)
      }
    }
  }
}
