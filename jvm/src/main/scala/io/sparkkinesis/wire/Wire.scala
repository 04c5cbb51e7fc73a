package io.sparkkinesis.wire

import java.io.ByteArrayOutputStream
import java.nio.charset.StandardCharsets.UTF_8

import scala.util.control.NoStackTrace

/** Protobuf wire format constants shared by the reader and the writer. */
private[sparkkinesis] object Wire {
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

/** Bytes that are not well-formed protobuf wire format: truncated, an invalid tag, a length past the end. */
private[sparkkinesis] final class WireFormatException(message: String)
  extends RuntimeException(message) with NoStackTrace

/** A cursor over `buf[pos, end)` that decodes protobuf wire primitives, throwing [[WireFormatException]] on
  * truncated or invalid input.
  */
private[sparkkinesis] final class WireReader(buf: Array[Byte], private var pos: Int, end: Int) {

  def hasMore: Boolean = pos < end

  /** Where the cursor is in the buffer. */
  def position: Int = pos

  /** A base-128 varint of at most 10 bytes; bits past 64 are dropped, as protobuf does. */
  def varint(): Long = {
    var result = 0L
    var shift = 0
    while (true) {
      if (pos >= end) throw new WireFormatException("truncated varint")
      if (shift >= 70) throw new WireFormatException("varint longer than 10 bytes")
      val b = buf(pos)
      pos += 1
      if (shift < 64) result |= (b & 0x7FL) << shift
      if (b >= 0) return result
      shift += 7
    }
    throw new WireFormatException("unreachable")
  }

  /** A field tag as (field number, wire type). Field number 0 and wire types 6 and 7 do not exist. */
  def tag(): (Int, Int) = {
    val t = rawTag()
    ((t >>> 3).toInt, (t & 7).toInt)
  }

  /** A field tag as read, `number << 3 | wireType` (no tuple), checked as [[tag]] checks it. */
  def rawTag(): Long = {
    val t = varint()
    val field = t >>> 3
    if (field == 0 || field > Int.MaxValue) throw new WireFormatException(s"invalid field number $field")
    if ((t & 7) > Wire.Fixed32) throw new WireFormatException(s"invalid wire type ${t & 7}")
    t
  }

  /** A length-delimited field's length; the cursor stays at the payload's start, [[position]]. */
  def length(): Int = {
    val len = varint()
    if (len < 0 || len > end - pos) throw new WireFormatException(s"length $len past the end of the input")
    len.toInt
  }

  /** A length-delimited field's payload as (offset, length) into the buffer; the cursor moves past it. */
  def lengthDelimited(): (Int, Int) = {
    val len = length()
    val start = pos
    pos += len
    (start, len)
  }

  /** An index into a table of `tableSize` entries, read as a uint64. */
  def index(tableSize: Int): Int = {
    val v = varint()
    if (v < 0 || v >= tableSize) throw new WireFormatException(s"index $v outside a table of $tableSize")
    v.toInt
  }

  def string(): String = {
    val (off, len) = lengthDelimited()
    new String(buf, off, len, UTF_8)
  }

  /** 4 bytes, little-endian. */
  def fixed32(): Int = {
    need(4)
    val v = (buf(pos) & 0xFF) | (buf(pos + 1) & 0xFF) << 8 | (buf(pos + 2) & 0xFF) << 16 | (buf(pos + 3) & 0xFF) << 24
    pos += 4
    v
  }

  /** 8 bytes, little-endian. */
  def fixed64(): Long = {
    val low = fixed32() & 0xFFFFFFFFL
    val high = fixed32() & 0xFFFFFFFFL
    low | (high << 32)
  }

  /** Moves past one field of `wireType` whose tag was just read (groups run up to their end tag). */
  def skip(field: Int, wireType: Int, depth: Int = 0): Unit = wireType match {
    case Wire.Varint => varint()
    case Wire.Fixed64 => advance(8)
    case Wire.Fixed32 => advance(4)
    case Wire.LengthDelimited => lengthDelimited()
    case Wire.StartGroup =>
      if (depth >= Wire.MaxGroupDepth) throw new WireFormatException("groups nested too deep")
      var closed = false
      while (!closed) {
        val (f, w) = tag()
        if (w == Wire.EndGroup) {
          if (f != field) throw new WireFormatException(s"group $field ended by the end tag of $f")
          closed = true
        } else skip(f, w, depth + 1)
      }
    case _ => throw new WireFormatException("an end-group tag with no group open")
  }

  /** Moves `n` bytes on. */
  def advance(n: Int): Unit = {
    need(n)
    pos += n
  }

  private def need(n: Int): Unit =
    if (end - pos < n) throw new WireFormatException(s"truncated: $n bytes expected, ${end - pos} left")
}

/** Encodes protobuf wire primitives. */
private[sparkkinesis] object WireWriter {
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

  /** 4 bytes, little-endian. */
  def fixed32(out: ByteArrayOutputStream, v: Int): Unit = {
    out.write(v); out.write(v >>> 8); out.write(v >>> 16); out.write(v >>> 24)
  }

  /** 8 bytes, little-endian. */
  def fixed64(out: ByteArrayOutputStream, v: Long): Unit = {
    fixed32(out, v.toInt); fixed32(out, (v >>> 32).toInt)
  }
}
