package io.sparkkinesis.kpl

import java.io.ByteArrayOutputStream
import java.nio.charset.StandardCharsets.UTF_8

/** Protobuf wire format constants shared by the reader and the writer. */
private[kpl] object Wire {
  val Varint = 0
  val Fixed64 = 1
  val LengthDelimited = 2
  val StartGroup = 3
  val EndGroup = 4
  val Fixed32 = 5

  /** Nesting allowed for unknown groups before the input is called malformed (bounds recursion). */
  val MaxGroupDepth = 64

  /** Bytes of `v` (taken as unsigned) as a base-128 varint. */
  def varintSize(v: Long): Int = {
    var n = 1
    var rest = v >>> 7
    while (rest != 0) { n += 1; rest >>>= 7 }
    n
  }
}

/** A cursor over `buf[pos, end)` that decodes protobuf wire primitives, throwing `Kpl.Malformed` on
  * truncated or invalid input.
  */
private[kpl] final class WireReader(buf: Array[Byte], private var pos: Int, end: Int) {
  import Kpl.Malformed

  def hasMore: Boolean = pos < end

  /** A base-128 varint of at most 10 bytes; bits past 64 are dropped, as protobuf does. */
  def varint(): Long = {
    var result = 0L
    var shift = 0
    while (true) {
      if (pos >= end || shift >= 70) throw Malformed
      val b = buf(pos)
      pos += 1
      if (shift < 64) result |= (b & 0x7FL) << shift
      if (b >= 0) return result
      shift += 7
    }
    throw Malformed // unreachable
  }

  /** A field tag as (field number, wire type). Field number 0 and wire types 6 and 7 do not exist. */
  def tag(): (Int, Int) = {
    val t = varint()
    val field = t >>> 3
    val wireType = (t & 7).toInt
    if (field == 0 || field > Int.MaxValue || wireType > Wire.Fixed32) throw Malformed
    (field.toInt, wireType)
  }

  /** A length-delimited field's payload as (offset, length) into the buffer; the cursor moves past it. */
  def lengthDelimited(): (Int, Int) = {
    val len = varint()
    if (len < 0 || len > end - pos) throw Malformed
    val start = pos
    pos += len.toInt
    (start, len.toInt)
  }

  /** An index into a table of `tableSize` entries, read as a uint64. */
  def index(tableSize: Int): Int = {
    val v = varint()
    if (v < 0 || v >= tableSize) throw Malformed
    v.toInt
  }

  def string(): String = {
    val (off, len) = lengthDelimited()
    new String(buf, off, len, UTF_8)
  }

  /** Moves past one field of `wireType` whose tag was just read (groups run up to their end tag). */
  def skip(field: Int, wireType: Int, depth: Int = 0): Unit = wireType match {
    case Wire.Varint => varint()
    case Wire.Fixed64 => advance(8)
    case Wire.Fixed32 => advance(4)
    case Wire.LengthDelimited => lengthDelimited()
    case Wire.StartGroup =>
      if (depth >= Wire.MaxGroupDepth) throw Malformed
      var closed = false
      while (!closed) {
        val (f, w) = tag()
        if (w == Wire.EndGroup) { if (f != field) throw Malformed; closed = true }
        else skip(f, w, depth + 1)
      }
    case _ => throw Malformed // an end-group tag with no group open
  }

  private def advance(n: Int): Unit = {
    if (end - pos < n) throw Malformed
    pos += n
  }
}

/** Encodes the few protobuf wire primitives the aggregator writes. */
private[kpl] object WireWriter {
  def varint(out: ByteArrayOutputStream, value: Long): Unit = {
    var v = value
    while ((v & ~0x7FL) != 0) {
      out.write(((v & 0x7F) | 0x80).toInt)
      v >>>= 7
    }
    out.write(v.toInt)
  }

  def tag(out: ByteArrayOutputStream, field: Int, wireType: Int): Unit =
    varint(out, (field.toLong << 3) | wireType)

  def varintField(out: ByteArrayOutputStream, field: Int, value: Long): Unit = {
    tag(out, field, Wire.Varint)
    varint(out, value)
  }

  def bytesField(out: ByteArrayOutputStream, field: Int, payload: Array[Byte]): Unit = {
    tag(out, field, Wire.LengthDelimited)
    varint(out, payload.length.toLong)
    out.write(payload, 0, payload.length)
  }
}
