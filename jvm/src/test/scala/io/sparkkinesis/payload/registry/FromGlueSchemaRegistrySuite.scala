package io.sparkkinesis.payload.registry

import java.io.ByteArrayOutputStream
import java.util.UUID
import java.util.zip.Deflater

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.Literal
import org.apache.spark.sql.types.BinaryType
import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.errors.KinesisException
import io.sparkkinesis.testing.ErrorText.assertMentions

/** `from_glue_schema_registry` on payloads refused before any registry call (the frame alone says why). */
class FromGlueSchemaRegistrySuite extends AnyFunSuite {
  private val id = UUID.fromString("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0")
  private val schema = """{"type": "record", "name": "Order", "fields": [{"name": "id", "type": "long"}]}"""

  /** A frame for `id` whose zlib body is 4 MiB of zero bytes: about 4 KB in the record. */
  private val crafted: Array[Byte] = {
    val deflater = new Deflater(Deflater.BEST_COMPRESSION)
    val out = new ByteArrayOutputStream()
    val chunk = new Array[Byte](8192)
    try {
      deflater.setInput(new Array[Byte](4 * 1024 * 1024))
      deflater.finish()
      while (!deflater.finished()) out.write(chunk, 0, deflater.deflate(chunk))
    } finally deflater.end()
    GlueFraming.frame(id, Array.emptyByteArray, compress = false).updated(1, GlueFraming.Zlib) ++ out.toByteArray
  }

  private def decode(mode: String): Any = {
    val settings = RegistrySettings.parse(Map("region" -> "eu-west-1", "schemaDefinition" -> schema, "mode" -> mode,
        "maxDecompressedSize" -> "1m"))
    FromGlueSchemaRegistry(Literal(crafted, BinaryType), settings, schema, PayloadFormat.Avro).eval()
  }

  test("a body that inflates past maxDecompressedSize fails the query naming the record, the version and the option") {
    assert(crafted.length < 8 * 1024)
    val e = intercept[KinesisException](decode("failfast"))
    assertMentions(e, "[KINESIS_SCHEMA_DECODE_FAILED] Cannot decode the payload of row 1", s"schema version id $id",
      s"zlib-compressed body of ${crafted.length - 18} bytes inflates to more than 1048576 bytes",
      "'maxDecompressedSize'")
  }

  test("with mode=permissive the record gives nulls and the reason") {
    val row = decode("permissive").asInstanceOf[InternalRow]
    assert(row.numFields == 2 && row.isNullAt(0))
    val reason = row.getUTF8String(1).toString
    assert(reason.contains("inflates to more than 1048576 bytes") && reason.contains(id.toString), reason)
  }

  test("maxDecompressedSize is 64 MiB unless set, and takes a size with a unit") {
    val base = Map("region" -> "eu-west-1", "schemaDefinition" -> schema)
    assert(RegistrySettings.parse(base).maxDecompressedSize == 64L * 1024 * 1024)
    assert(RegistrySettings.parse(base + ("maxDecompressedSize" -> "2m")).maxDecompressedSize == 2L * 1024 * 1024)
    assertMentions(
      intercept[io.sparkkinesis.errors.KinesisOptionException](
        RegistrySettings.parse(base + ("maxDecompressedSize" -> "12"))), "'maxDecompressedSize'", "from 1024")
  }
}
