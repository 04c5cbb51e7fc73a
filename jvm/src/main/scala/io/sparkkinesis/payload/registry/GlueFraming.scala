package io.sparkkinesis.payload.registry

import java.io.ByteArrayOutputStream
import java.nio.ByteBuffer
import java.util.UUID
import java.util.zip.{DataFormatException, Deflater, Inflater}

/**
 * The Glue Schema Registry's frame around a payload, as AWS's serializers write it: an 18-byte header (the header
 * version `3`, the compression, `0` none or `5` zlib, and the schema version id, a UUID, most significant half
 * first), then the body, zlib-compressed (a zlib stream, Java's Deflater defaults) when the header says so.
 * docs/research/glue-schema-registry.md has where this was learnt and checked.
 */
private[sparkkinesis] object GlueFraming {
  val HeaderVersion: Byte = 3
  val Uncompressed: Byte = 0
  val Zlib: Byte = 5
  val HeaderSize = 18

  /** A framed payload's schema version id and its body (inflated when it was compressed). */
  final case class Body(schemaVersionId: UUID, bytes: Array[Byte], offset: Int, length: Int)

  /** Why a payload is not a Glue Schema Registry frame; the message says what was found. */
  final class NotFramed(message: String) extends RuntimeException(message)

  /**
   * A compressed body that inflates to more than `limit` bytes (`compressed` bytes in the record): refused before it
   * is held whole, so that one crafted record of a few KB cannot run an executor out of memory.
   */
  final class BodyTooLarge(val compressed: Int, val limit: Long)
    extends RuntimeException(s"its zlib-compressed body of $compressed bytes inflates to more than $limit bytes")

  /** The largest inflated body [[unframe]] takes when its caller gives no other limit (`maxDecompressedSize`). */
  val DefaultMaxInflated: Long = 64L * 1024 * 1024

  /** The schema version id of `payload`'s header, or why it has none. */
  def schemaVersionId(payload: Array[Byte]): UUID = {
    checkHeader(payload)
    val b = ByteBuffer.wrap(payload, 2, 16)
    new UUID(b.getLong, b.getLong)
  }

  /**
   * The body of `payload`, inflated when compressed; [[NotFramed]] when it is no frame, [[BodyTooLarge]] when its
   * compressed body inflates to more than `maxInflated` bytes.
   */
  def unframe(payload: Array[Byte], maxInflated: Long = DefaultMaxInflated): Body = {
    val id = schemaVersionId(payload)
    payload(1) match {
      case Uncompressed => Body(id, payload, HeaderSize, payload.length - HeaderSize)
      case _ =>
        val inflated = inflate(payload, HeaderSize, payload.length - HeaderSize, maxInflated)
        Body(id, inflated, 0, inflated.length)
    }
  }

  /** `body` framed for `schemaVersionId`, its body zlib-compressed when `compress`. */
  def frame(schemaVersionId: UUID, body: Array[Byte], compress: Boolean): Array[Byte] = {
    val content = if (compress) deflate(body) else body
    val out = ByteBuffer.allocate(HeaderSize + content.length)
    out.put(HeaderVersion).put(if (compress) Zlib else Uncompressed)
    out.putLong(schemaVersionId.getMostSignificantBits).putLong(schemaVersionId.getLeastSignificantBits)
    out.put(content).array()
  }

  private def checkHeader(payload: Array[Byte]): Unit = {
    if (payload.length < HeaderSize)
      throw new NotFramed(
        s"it has ${payload.length} bytes, fewer than the $HeaderSize of a Glue Schema Registry header")
    if (payload(0) != HeaderVersion)
      throw new NotFramed(f"its first byte is 0x${payload(0)}%02x, not the header version 0x03 of a Glue Schema " +
        "Registry header")
    if (payload(1) != Uncompressed && payload(1) != Zlib)
      throw new NotFramed(f"its compression byte is 0x${payload(1)}%02x, neither 0x00 (none) nor 0x05 (zlib)")
  }

  private def deflate(body: Array[Byte]): Array[Byte] = {
    val deflater = new Deflater()
    try {
      deflater.setInput(body)
      deflater.finish()
      val out = new ByteArrayOutputStream(math.max(64, body.length / 2))
      val chunk = new Array[Byte](8192)
      while (!deflater.finished()) out.write(chunk, 0, deflater.deflate(chunk))
      out.toByteArray
    } finally deflater.end()
  }

  private def inflate(bytes: Array[Byte], offset: Int, length: Int, limit: Long): Array[Byte] = {
    val inflater = new Inflater()
    try {
      inflater.setInput(bytes, offset, length)
      val out = new ByteArrayOutputStream(math.max(64L, math.min(length * 3L, limit)).toInt)
      val chunk = new Array[Byte](8192)
      while (!inflater.finished()) {
        val n = inflater.inflate(chunk)
        if (n == 0 && (inflater.needsInput() || inflater.needsDictionary()))
          throw new NotFramed("its zlib-compressed body ends early")
        if (out.size().toLong + n > limit) throw new BodyTooLarge(length, limit)
        out.write(chunk, 0, n)
      }
      out.toByteArray
    } catch {
      case e: DataFormatException =>
        throw new NotFramed(s"its zlib-compressed body is not valid zlib (${e.getMessage})")
    } finally inflater.end()
  }
}
