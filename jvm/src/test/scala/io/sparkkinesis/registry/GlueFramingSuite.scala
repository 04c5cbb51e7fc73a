package io.sparkkinesis.registry

import java.nio.charset.StandardCharsets.UTF_8
import java.util.UUID
import java.util.zip.Inflater

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
}
