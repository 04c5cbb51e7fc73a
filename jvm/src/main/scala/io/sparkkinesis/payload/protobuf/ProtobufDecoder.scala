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
 * wire type the field cannot have is skipped as an unknown field would be, the last value of a scalar field that
 * is not repeated wins, a message field that occurs more than once is merged (its occurrences read as one message,
 * as protobuf merges them), setting a oneof member clears the others, a repeated field may come packed or not, a
 * map's last entry for a key wins, a closed (proto2) enum's unknown number is an unknown field (skipped: the field
 * keeps its default or earlier value; a map entry holding it is dropped) and an absent proto2 field with a
 * `[default = ...]` reads as that default.
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

  /** What [[FieldPlan.read]] did: nothing (the caller skips the value), set the field, or read past the value. */
  private final val NotRead = 0
  private final val Stored = 1
  private final val Skipped = 2

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
        val outcome = if (slot < 0) NotRead else fields(slot).read(in, buf, wireType, values)
        if (outcome == NotRead) in.skip(number, wireType)
        else if (outcome == Stored && siblings(slot) != null) {
          val others = siblings(slot)
          var j = 0
          while (j < others.length) { values(others(j)) = null; fields(others(j)).reset(); j += 1 }
        }
      }
      i = 0
      while (i < fields.length) { fields(i).finish(values); i += 1 }
      new GenericInternalRow(values)
    }
  }

  /** The slot of a message field read so far: its occurrences are merged once the message is read. */
  private object Pending

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
    private val default: () => Any = declaredDefault(schema, f, path).getOrElse(
      if (nullable(f) || f.repeated) () => null else defaultOf(schema, f.fieldType))
    // A message field that is not repeated: its occurrences (offsets into the buffer), merged when it is finished.
    private val nested = valueType match {
      case MessageRef(name) if !f.repeated => new MessagePlan(schema, schema.messageNamed(name), path)
      case _ => null
    }
    private var starts = if (nested != null) new Array[Int](2) else null
    private var ends = if (nested != null) new Array[Int](2) else null
    private var occurrences = 0
    private var occurrenceBuf: Array[Byte] = null
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

    def reset(): Unit = {
      if (items != null) {
        items.count = 0
        if (isMap) { keys.count = 0; keyIndex.clear() }
      }
      occurrences = 0
      occurrenceBuf = null
    }

    /**
     * Reads a value of the field whose tag had `wireType`: [[NotRead]] for a wire type it cannot have, [[Skipped]]
     * for a value that is an unknown field (a closed enum's unknown number), else [[Stored]].
     */
    def read(in: WireReader, buf: Array[Byte], wireType: Int, values: Array[Any]): Int =
      if (isMap) {
        if (wireType != Wire.LengthDelimited) NotRead
        else { readEntry(in, buf); Stored }
      } else if (wireType == valueWire) {
        if (nested != null) { occurrence(in, buf); values(slot) = Pending; Stored }
        else {
          val v = readValue(in, buf)
          if (v.asInstanceOf[AnyRef] eq Unknown) Skipped
          else {
            if (items == null) values(slot) = v else items.add(v)
            Stored
          }
        }
      } else if (packable && wireType == Wire.LengthDelimited) {
        val len = in.length()
        val packed = new WireReader(buf, in.position, in.position + len)
        in.advance(len)
        while (packed.hasMore) {
          val v = readValue(packed, buf)
          if (!(v.asInstanceOf[AnyRef] eq Unknown)) items.add(v)
        }
        Stored
      } else NotRead

    private def occurrence(in: WireReader, buf: Array[Byte]): Unit = {
      val len = in.length()
      if (occurrences == starts.length) {
        starts = java.util.Arrays.copyOf(starts, occurrences * 2)
        ends = java.util.Arrays.copyOf(ends, occurrences * 2)
      }
      starts(occurrences) = in.position
      ends(occurrences) = in.position + len
      occurrences += 1
      occurrenceBuf = buf
      in.advance(len)
    }

    /** The message of the field's occurrences: one, or their bytes joined, which protobuf reads as their merge. */
    private def merged(): InternalRow =
      if (occurrences == 1) nested.read(occurrenceBuf, starts(0), ends(0))
      else {
        var size = 0
        var i = 0
        while (i < occurrences) { size += ends(i) - starts(i); i += 1 }
        val joined = new Array[Byte](size)
        var at = 0
        i = 0
        while (i < occurrences) {
          System.arraycopy(occurrenceBuf, starts(i), joined, at, ends(i) - starts(i))
          at += ends(i) - starts(i)
          i += 1
        }
        nested.read(joined, 0, size)
      }

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
      if (value.asInstanceOf[AnyRef] eq Unknown) return // a closed enum's unknown number: the entry is unknown
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
      else if (nested != null && values(slot) != null) values(slot) = merged()
      else if (values(slot) == null) {
        if (f.label == Required)
          throw new ProtobufConversionException(s"the required field '$path' (number $number) of Protobuf message " +
            s"${m.fullName} is missing")
        values(slot) = default()
      }
  }
}
