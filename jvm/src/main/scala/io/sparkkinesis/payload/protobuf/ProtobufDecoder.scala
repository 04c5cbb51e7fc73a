package io.sparkkinesis.payload.protobuf

import scala.util.control.NonFatal

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.catalyst.util.{ArrayBasedMapData, GenericArrayData}

import ProtoSchema._
import io.sparkkinesis.wire.{Wire, WireReader}
import ProtobufReads._
import ProtobufTypes._
import io.sparkkinesis.errors.FieldPath._

/**
 * Decodes the body of a Glue Schema Registry Protobuf frame (the message index as a varint, then the message's
 * bytes) written with `writer` as message `readerMessage` of `reader`, to Catalyst values of
 * `ProtobufTypes.sparkType(reader, readerMessage)`: an `InternalRow`. The index must name, in `writer`, the message
 * of the reader message's full name. Fields are matched by number, as protobuf does: a field the reader does not
 * have is skipped, a field the record lacks takes its default (or null, or an empty array or map), a value with a
 * wire type the field cannot have is skipped as an unknown field would be, the last value of a field that is not
 * repeated wins (for sub-messages too: no merging), setting a oneof member clears the others, a repeated field
 * may come packed or not, and a map's last entry for a key wins.
 *
 * The reading is planned once, here: per message, its fields' readers in an array indexed by field number, so no
 * record looks at the schema. Not thread-safe (one per task or thread): it reuses buffers for repeated fields
 * between calls, never in what it returns (strings and bytes are copied), so a returned row stays valid after the
 * next call.
 */
private[sparkkinesis] final class ProtobufDecoder(writer: ProtoSchema, reader: ProtoSchema, readerMessage: String) {
  private val message = reader.message(readerMessage)
  // Fails early, with the field's path, on a reader message Spark cannot hold (one that contains itself).
  ProtobufTypes.sparkType(reader, message.fullName)
  private val expectedIndex = writer.messages.indexWhere(_.fullName == message.fullName)
  private val plan = new ProtobufDecoder.MessagePlan(reader, message, "")

  /** The row of the frame body in `bytes(offset until offset + length)`; a wrong or truncated body throws. */
  def decode(bytes: Array[Byte], offset: Int, length: Int): Any = {
    val end = offset + length
    try {
      val in = new WireReader(bytes, offset, end)
      val index = in.varint()
      if (expectedIndex < 0 || index != expectedIndex) throw wrongIndex(index)
      plan.read(bytes, in.position, end)
    } catch {
      case e: ProtobufConversionException => throw e
      case NonFatal(e) =>
        throw new ProtobufConversionException(s"cannot decode $length bytes as Protobuf message " +
            s"${message.fullName}: ${e.getMessage}", e)
    }
  }

  private def wrongIndex(index: Long): ProtobufConversionException = {
    val found =
      if (index >= 0 && index < writer.messages.size) s"message ${writer.messages(index.toInt).fullName}"
      else s"no message (the writer schema has ${writer.messages.size})"
    val expected =
      if (expectedIndex < 0) s"the writer schema has no message ${message.fullName}"
      else s"${message.fullName} is message index $expectedIndex"
    new ProtobufConversionException(s"the record's Protobuf message index $index is $found in the writer schema, " +
      s"but the reader reads ${message.fullName} ($expected)")
  }
}

private[sparkkinesis] object ProtobufDecoder {

  /** Field numbers up to this are looked up in an array; a message with a larger one uses a hash map. */
  private val ArrayLookupLimit = 4096

  /** The reading of one message: a reader per field, looked up by field number. */
  private[protobuf] final class MessagePlan(schema: ProtoSchema, m: Message, path: String) {
    private val fields: Array[FieldPlan] =
      m.fields.indices.map(i => new FieldPlan(schema, m, m.fields(i), i, field(path, m.fields(i).name))).toArray
    private val maxNumber = if (m.fields.isEmpty) 0 else m.fields.map(_.number).max
    private val byNumber: Array[Int] =
      if (maxNumber > ArrayLookupLimit) null
      else {
        val a = Array.fill(maxNumber + 1)(-1)
        fields.foreach(f => a(f.number) = f.slot)
        a
      }
    private val byNumberMap: Map[Int, Int] =
      if (byNumber != null) Map.empty else fields.map(f => f.number -> f.slot).toMap
    // For each oneof member, the slots of the other members, cleared when it is set.
    private val siblings: Array[Array[Int]] = m.fields.map { f =>
      if (f.oneof == null) null
      else m.fields.indices.filter(j => m.fields(j).oneof == f.oneof && m.fields(j).number != f.number).toArray
    }.toArray

    private def slotOf(number: Int): Int =
      if (byNumber != null) { if (number < byNumber.length) byNumber(number) else -1 }
      else byNumberMap.getOrElse(number, -1)

    /** The row of the message in `buf[from, until)`. */
    def read(buf: Array[Byte], from: Int, until: Int): InternalRow = {
      val values = new Array[Any](fields.length)
      var i = 0
      while (i < fields.length) { fields(i).reset(); i += 1 }
      val in = new WireReader(buf, from, until)
      while (in.hasMore) {
        val tag = in.rawTag()
        val number = (tag >>> 3).toInt
        val wireType = (tag & 7).toInt
        val slot = slotOf(number)
        if (slot < 0 || !fields(slot).read(in, buf, wireType, values)) in.skip(number, wireType)
        else if (siblings(slot) != null) {
          val others = siblings(slot)
          var j = 0
          while (j < others.length) { values(others(j)) = null; j += 1 }
        }
      }
      i = 0
      while (i < fields.length) { fields(i).finish(values); i += 1 }
      new GenericInternalRow(values)
    }
  }

  /** A growable buffer of values, reused between messages; [[take]] copies them out. */
  private final class Values {
    private var items = new Array[Any](16)
    var count = 0
    def add(v: Any): Unit = {
      if (count == items.length) {
        val bigger = new Array[Any](count * 2)
        System.arraycopy(items, 0, bigger, 0, count)
        items = bigger
      }
      items(count) = v
      count += 1
    }
    def update(i: Int, v: Any): Unit = items(i) = v
    def take(): GenericArrayData = {
      val out = new Array[Any](count)
      System.arraycopy(items, 0, out, 0, count)
      new GenericArrayData(out)
    }
  }

  /** The reading of one field into its slot of the message's row. */
  private final class FieldPlan(schema: ProtoSchema, m: Message, f: Field, val slot: Int, path: String) {
    val number: Int = f.number
    private val valueType = f.fieldType match { case MapOf(_, _, entry) => MessageRef(entry); case t => t }
    private val valueWire = wireType(valueType)
    private val readValue: Read = readerOf(schema, valueType, path)
    private val packable = f.repeated && ProtoSchema.packable(f.fieldType)
    private val default: () => Any = if (nullable(f) || f.repeated) () => null else defaultOf(schema, f.fieldType)
    private val isMap = f.fieldType.isInstanceOf[MapOf]
    private val items = if (f.repeated) new Values else null
    // A map: its entries' key and value readers and defaults, the keys seen (for the last entry to win).
    private val (readKey, readMapValue, keyDefault, valueDefault) = f.fieldType match {
      case MapOf(k, v, _) =>
        (readerOf(schema, k, path), readerOf(schema, v, mapValue(path)), defaultOf(schema, k), defaultOf(schema, v))
      case _ => (null, null, null, null)
    }
    private val (keyWire, mapValueWire) = f.fieldType match {
      case MapOf(k, v, _) => (wireType(k), wireType(v))
      case _ => (-1, -1)
    }
    private val keys = if (isMap) new Values else null
    private val keyIndex = if (isMap) new java.util.HashMap[Any, Integer]() else null

    def reset(): Unit = if (items != null) {
      items.count = 0
      if (isMap) { keys.count = 0; keyIndex.clear() }
    }

    /** Reads a value of the field whose tag had `wireType`; false (nothing read) for a wire type it cannot have. */
    def read(in: WireReader, buf: Array[Byte], wireType: Int, values: Array[Any]): Boolean =
      if (isMap) {
        if (wireType != Wire.LengthDelimited) false
        else { readEntry(in, buf); true }
      } else if (wireType == valueWire) {
        if (items == null) values(slot) = readValue(in, buf) else items.add(readValue(in, buf))
        true
      } else if (packable && wireType == Wire.LengthDelimited) {
        val len = in.length()
        val packed = new WireReader(buf, in.position, in.position + len)
        in.advance(len)
        while (packed.hasMore) items.add(readValue(packed, buf))
        true
      } else false

    private def readEntry(in: WireReader, buf: Array[Byte]): Unit = {
      val len = in.length()
      val entry = new WireReader(buf, in.position, in.position + len)
      in.advance(len)
      var key: Any = null
      var value: Any = null
      while (entry.hasMore) {
        val tag = entry.rawTag()
        val (n, w) = ((tag >>> 3).toInt, (tag & 7).toInt)
        if (n == 1 && w == keyWire) key = readKey(entry, buf)
        else if (n == 2 && w == mapValueWire) value = readMapValue(entry, buf)
        else entry.skip(n, w)
      }
      if (key == null) key = keyDefault()
      if (value == null) value = valueDefault()
      val seen = keyIndex.get(key)
      if (seen != null) items(seen.intValue) = value
      else { keyIndex.put(key, Integer.valueOf(items.count)); keys.add(key); items.add(value) }
    }

    /** Completes the field's slot once the message is read: defaults, the array or map of the values read. */
    def finish(values: Array[Any]): Unit =
      if (isMap) values(slot) = new ArrayBasedMapData(keys.take(), items.take())
      else if (items != null) values(slot) = items.take()
      else if (values(slot) == null) {
        if (f.label == Required)
          throw new ProtobufConversionException(s"the required field '$path' (number $number) of Protobuf message " +
            s"${m.fullName} is missing")
        values(slot) = default()
      }
  }
}
