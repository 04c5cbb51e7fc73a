package io.sparkkinesis.payload.registry

import java.nio.charset.StandardCharsets.UTF_8
import java.util.UUID
import java.io.ByteArrayOutputStream
import java.util.zip.{Deflater, Inflater}

import org.scalatest.funsuite.AnyFunSuite

/** The Glue Schema Registry frame (tests/test_schema_registry.py checks it against AWS's format as PyPI's package writes it). */
class GlueFramingSuite extends AnyFunSuite {
  private val id = UUID.fromString("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0")
  private val body = ("an Avro body " * 40).getBytes(UTF_8)

  test("the header is the version byte 3, the compression byte and the id, most significant half first") {
    val framed = GlueFraming.frame(id, body, compress = false)
    assert(framed.take(2).toSeq == Seq[Byte](3, 0))
    assert(framed.slice(2, 18).toSeq == Seq(0x0F, 0x1E, 0x2D, 0x3C, 0x4B, 0x5A, 0x69, 0x78, 0x87, 0x96, 0xA5, 0xB4,
      0xC3,
      0xD2, 0xE1, 0xF0).map(_.toByte))
    assert(framed.drop(18).toSeq == body.toSeq)
    val read = GlueFraming.unframe(framed)
    assert(read.schemaVersionId == id)
    assert(read.bytes.slice(read.offset, read.offset + read.length).toSeq == body.toSeq)
  }

  test("a compressed frame holds a zlib stream of the body, and reads back as the body") {
    val framed = GlueFraming.frame(id, body, compress = true)
    assert(framed(1) == 5 && framed.length < 18 + body.length)
    // Inflated by the JDK directly, not by the code under test.
    val inflater = new Inflater()
    inflater.setInput(framed, 18, framed.length - 18)
    val out = new Array[Byte](body.length + 10)
    val n = inflater.inflate(out)
    assert(inflater.finished() && out.take(n).toSeq == body.toSeq)
    val read = GlueFraming.unframe(framed)
    assert(read.bytes.slice(read.offset, read.offset + read.length).toSeq == body.toSeq)
  }

  test("what is not a frame says why") {
    def why(bytes: Array[Byte]) = intercept[GlueFraming.NotFramed](GlueFraming.unframe(bytes)).getMessage
    assert(why(Array[Byte](3, 0, 1)).contains("3 bytes, fewer than the 18"))
    assert(why(Array.fill[Byte](20)(1)).contains("first byte is 0x01"))
    assert(why(Array[Byte](3, 7) ++ Array.fill[Byte](18)(0)).contains("compression byte is 0x07"))
    val cut = GlueFraming.frame(id, body, compress = true).dropRight(10)
    assert(why(cut).contains("zlib-compressed body ends early"))
    assert(why(Array[Byte](3, 5) ++ Array.fill[Byte](16)(0) ++ "not zlib".getBytes(UTF_8)).contains("not valid zlib"))
  }

  /** A frame whose zlib body is `zeros` zero bytes, deflated a chunk at a time (never held whole). */
  private def bomb(zeros: Long): Array[Byte] = {
    val deflater = new Deflater(Deflater.BEST_COMPRESSION)
    val out = new ByteArrayOutputStream()
    val input = new Array[Byte](1 << 20)
    val chunk = new Array[Byte](8192)
    var left = zeros
    try {
      while (left > 0) {
        val n = math.min(left, input.length.toLong).toInt
        deflater.setInput(input, 0, n)
        left -= n
        if (left == 0) deflater.finish()
        while (!deflater.needsInput() || (left == 0 && !deflater.finished()))
          out.write(chunk, 0, deflater.deflate(chunk))
      }
    } finally deflater.end()
    GlueFraming.frame(id, Array.emptyByteArray, compress = false).take(GlueFraming.HeaderSize).updated(1, 5: Byte) ++
      out.toByteArray
  }

  test("a compressed body is inflated only up to the limit: a few KB that inflate to far more are refused") {
    val small = bomb(4L * 1024 * 1024)
    assert(small.length < 8 * 1024, s"the crafted record has ${small.length} bytes")
    val refused = intercept[GlueFraming.BodyTooLarge](GlueFraming.unframe(small, maxInflated = 1024 * 1024))
    assert(refused.limit == 1024 * 1024 && refused.compressed == small.length - 18)
    assert(refused.getMessage.contains(s"body of ${small.length - 18} bytes inflates to more than 1048576 bytes"))
    // At the limit exactly it is read whole.
    val whole = GlueFraming.unframe(small, maxInflated = 4L * 1024 * 1024)
    assert(whole.length == 4 * 1024 * 1024 && whole.bytes.forall(_ == 0))
    // The default limit (maxDecompressedSize's default) refuses what inflates past it.
    val large = bomb(GlueFraming.DefaultMaxInflated + 1)
    assert(large.length < 128 * 1024)
    assert(intercept[GlueFraming.BodyTooLarge](GlueFraming.unframe(large)).limit == GlueFraming.DefaultMaxInflated)
  }
}
