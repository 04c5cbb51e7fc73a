package io.sparkkinesis.payload.avro

import java.io.ByteArrayOutputStream
import java.math.{BigDecimal => JBigDecimal, BigInteger}
import java.nio.ByteBuffer

import org.apache.avro.Schema
import org.apache.avro.generic.{GenericData, GenericDatumWriter}
import org.apache.avro.io.EncoderFactory
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.catalyst.util.{ArrayBasedMapData, ArrayData, GenericArrayData, MapData}
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.testing.CatalystValues
import io.sparkkinesis.testing.CatalystValues.{arr, map, row, str}

/**
 * The Avro <-> Catalyst conversions, checked against Avro's own writer: what GenericDatumWriter writes from records
 * built by hand decodes to Catalyst values computed here by hand, the encoder writes the same bytes from them, and
 * schema resolution, reused buffers and the errors' field paths behave.
 */
class AvroConversionSuite extends AnyFunSuite {
  import AvroConversionSuite._

  private val everything = parse(EverythingJson)

  /** Everything and one field more, with a default: a reader schema that needs Avro's resolution. */
  private val everythingPlus =
    parse(EverythingJson.stripSuffix("]}") + """, {"name": "extra", "type": "int", "default": 1}]}""")
  private def schemaOf(name: String): Schema = everything.getField(name).schema

  /** A record of every type, as Avro's generic API holds it. */
  private def everythingRecord(): GenericData.Record = {
    val r = new GenericData.Record(everything)
    r.put("b", true); r.put("i", -5); r.put("l", 1L << 40); r.put("f", 1.5f); r.put("d", -2.25)
    r.put("s", "héllo ✓"); r.put("bin", ByteBuffer.wrap(Array[Byte](0, 1, 2, -1)))
    r.put("fx", new GenericData.Fixed(schemaOf("fx"), Array[Byte](9, 8, 7, 6)))
    r.put("e", new GenericData.EnumSymbol(schemaOf("e"), "SPADES")); r.put("n", null)
    r.put("arr", java.util.Arrays.asList(Integer.valueOf(1), null, Integer.valueOf(3)))
    val m = new java.util.LinkedHashMap[String, Any](); m.put("a", 1.0); m.put("b", 2.5); r.put("m", m)
    r.put("opt", "x"); r.put("optLast", null); r.put("il", 7); r.put("fd", 0.5f)
    val point = new GenericData.Record(schemaOf("multi").getTypes.get(3)); point.put("x", 3); r.put("multi", point)
    r.put("date", 19700); r.put("tsMillis", 1700000000123L); r.put("tsMicros", 1700000000123456L)
    r.put("ltsMillis", -1700000000999L); r.put("ltsMicros", 1700000000999999L)
    r.put("timeMillis", 45296789); r.put("timeMicros", 45296789012L)
    r.put("decBytes", ByteBuffer.wrap(BigInteger.valueOf(-12345).toByteArray))
    r.put("decFixed", new GenericData.Fixed(schemaOf("decFixed"), twosComplement("123456789012345678901234", 16)))
    r.put("uuid", "123e4567-e89b-12d3-a456-426614174000")
    val inner = new GenericData.Record(schemaOf("nested")); inner.put("name", "n")
    inner.put("tags", java.util.Arrays.asList("t1", "t2")); r.put("nested", inner); r.put("unknownLogical", "z")
    r
  }

  /** The same record as Catalyst values, computed by hand. */
  private val everythingRow: InternalRow = row(true, -5, 1L << 40, 1.5f, -2.25, str("héllo ✓"),
    Array[Byte](0, 1, 2, -1), Array[Byte](9, 8, 7, 6), str("SPADES"), null, arr(1, null, 3),
    map("a" -> 1.0, "b" -> 2.5), str("x"), null, 7L, 0.5, row(null, null, row(3)), 19700, 1700000000123000L,
    1700000000123456L, -1700000000999000L, 1700000000999999L, 45296789, 45296789012L,
    Decimal(new JBigDecimal("-123.45"), 9, 2), Decimal(new JBigDecimal("12345678901234567890.1234"), 30, 4),
    str("123e4567-e89b-12d3-a456-426614174000"), row(str("n"), arr(str("t1"), str("t2"))), str("z"))

  private def same(actual: Any, expected: Any, dt: DataType): Unit = assert(norm(actual, dt) === norm(expected, dt))

  test("sparkType maps every Avro type and logical type") {
    val point = StructType(Seq(StructField("x", IntegerType, nullable = false)))
    val expected = StructType(Seq(
        "b" -> BooleanType, "i" -> IntegerType, "l" -> LongType, "f" -> FloatType, "d" -> DoubleType,
        "s" -> StringType, "bin" -> BinaryType, "fx" -> BinaryType, "e" -> StringType, "n" -> NullType,
        "arr" -> ArrayType(IntegerType, containsNull = true),
        "m" -> MapType(StringType, DoubleType, valueContainsNull = false), "opt" -> StringType,
        "optLast" -> StringType, "il" -> LongType, "fd" -> DoubleType,
        "multi" -> StructType(Seq(StructField("member0", StringType), StructField("member1", IntegerType),
            StructField("member2", point))),
        "date" -> DateType, "tsMillis" -> TimestampType, "tsMicros" -> TimestampType,
        "ltsMillis" -> TimestampNTZType, "ltsMicros" -> TimestampNTZType, "timeMillis" -> IntegerType,
        "timeMicros" -> LongType, "decBytes" -> DecimalType(9, 2), "decFixed" -> DecimalType(30, 4),
        "uuid" -> StringType,
        "nested" -> StructType(Seq(StructField("name", StringType, nullable = false),
            StructField("tags", ArrayType(StringType, containsNull = false), nullable = false))),
        "unknownLogical" -> StringType
      ).map { case (name, dt) => StructField(name, dt, nullable = Set("n", "opt", "optLast", "multi")(name)) })
    assert(AvroTypes.sparkType(everything) === expected)
    assert(AvroTypes.nullable(parse("""["long", "null"]""")) && !AvroTypes.nullable(parse("\"long\"")))
    assert(AvroTypes.sparkType(parse("""["null", "int", "long"]""")) === LongType)
  }

  private def withExtra(r: InternalRow): InternalRow =
    row(r.toSeq(AvroTypes.sparkType(everything).asInstanceOf[StructType]) :+ 1: _*)

  test("decodes what Avro's own writer wrote, at an offset, to values computed by hand") {
    val bytes = avroBytes(everything, everythingRecord())
    val framed = Array.fill[Byte](18)(3) ++ bytes ++ Array[Byte](42) // a header before, a stray byte after
    val decoded = new AvroDecoder(everything, everything).decode(framed, 18, bytes.length)
    same(decoded, everythingRow, AvroTypes.sparkType(everything))
    // The same through Avro's schema resolution, to a reader schema with a field more.
    val resolved = new AvroDecoder(everything, everythingPlus).decode(framed, 18, bytes.length)
    same(resolved, withExtra(everythingRow), AvroTypes.sparkType(everythingPlus))
  }

  test("encodes the bytes Avro's own writer writes, and decodes them back") {
    val record = everythingRecord()
    record.put("il", 7L); record.put("fd", 0.5) // the encoder writes a long and a double
    val encoded = new AvroEncoder(AvroTypes.sparkType(everything), everything).encode(everythingRow)
    assert(encoded.toSeq === avroBytes(everything, record).toSeq)
    same(new AvroDecoder(everything, everything).decode(encoded, 0, encoded.length), everythingRow,
      AvroTypes.sparkType(everything))
  }

  test("every type round-trips, nulls and empty containers included") {
    val other = row(false, Int.MinValue, Long.MaxValue, Float.NaN, Double.NegativeInfinity, str(""), Array[Byte](),
      Array[Byte](0, 0, 0, 0), str("HEARTS"), null, arr(), map(), null, str("y"), -1L, -0.25, row(str("s"), null, null),
      -1, -1000L, 0L, -9223372036854775000L, Long.MaxValue, 0, 0L, Decimal(new JBigDecimal("9999999.99"), 9, 2),
      Decimal(new JBigDecimal("-99999999999999999999999999.9999"), 30, 4), str(""), row(str(""), arr()), str(""))
    val dt = AvroTypes.sparkType(everything)
    val (encoder, decoder) = (new AvroEncoder(dt, everything), new AvroDecoder(everything, everything))
    for (value <- Seq(everythingRow, other)) {
      val bytes = encoder.encode(value)
      same(decoder.decode(bytes, 0, bytes.length), value, dt)
    }
    // Microseconds below a millisecond go (floor) into timestamp-millis: -1 us is -1 ms.
    val millis = new AvroEncoder(TimestampType, parse("""{"type": "long", "logicalType": "timestamp-millis"}"""))
    assert(new AvroDecoder(Schema.create(Schema.Type.LONG), Schema.create(Schema.Type.LONG))
      .decode(millis.encode(-1L), 0, 1) === -1L)
    for ((json, dt, value) <- Seq[(String, DataType, Any)](("\"string\"", StringType, str("top")),
        ("""["null", "long"]""", LongType, null),
        ("""{"type": "array", "items": "int"}""", ArrayType(IntegerType),
          arr(1, 2)),
        ("""{"type": "map", "values": ["null", "string"]}""", MapType(StringType, StringType),
          map("k" -> null, "k2" -> str("v"))))) {
      val schema = parse(json)
      val bytes = new AvroEncoder(dt, schema).encode(value)
      same(new AvroDecoder(schema, schema).decode(bytes, 0, bytes.length), value, dt)
    }
  }

  test("schema evolution: a field added with a default, one dropped, fields reordered, int promoted to long") {
    val v1 = parse("""{"type": "record", "name": "User", "fields": [{"name": "id", "type": "int"},
      {"name": "legacy", "type": "string"}, {"name": "name", "type": "string"}]}""")
    val v2 = parse("""{"type": "record", "name": "User", "fields": [{"name": "name", "type": "string"},
      {"name": "id", "type": "long"}, {"name": "score", "type": "int", "default": 7},
      {"name": "country", "type": ["string", "null"], "default": "NZ"}]}""")
    val r = new GenericData.Record(v1); r.put("id", 42); r.put("legacy", "gone"); r.put("name", "ann")
    val bytes = avroBytes(v1, r)
    val decoded = new AvroDecoder(v1, v2).decode(bytes, 0, bytes.length)
    same(decoded, row(str("ann"), 42L, 7, str("NZ")), AvroTypes.sparkType(v2))
    def promote(writer: String, reader: String, datum: Any): Any = {
      val b = avroBytes(parse(writer), datum)
      new AvroDecoder(parse(writer), parse(reader)).decode(b, 0, b.length)
    }
    assert(promote("\"int\"", "\"long\"", 5) === 5L)
    assert(promote("\"int\"", "\"double\"", 5) === 5.0)
    assert(promote("\"float\"", "\"double\"", 0.5f) === 0.5)
    assert(norm(promote("\"string\"", "\"bytes\"", "ab"), BinaryType) === List[Byte](97, 98))
    assert(promote("\"long\"", """["null", "long"]""", 9L) === 9L)
  }

  test("a decoded row stays as it was after the decoder reads the next datum") {
    val first = avroBytes(everything, everythingRecord())
    val second = everythingRecord()
    second.put("s", "ab"); second.put("bin", ByteBuffer.wrap(Array[Byte](7))); second.put("uuid", "u")
    second.put("decBytes", ByteBuffer.wrap(Array[Byte](1))); second.put("arr", java.util.Arrays.asList(9))
    second.put("m", java.util.Collections.singletonMap("q", 0.0))
    second.put("fx", new GenericData.Fixed(schemaOf("fx"), Array[Byte](1, 1, 1, 1)))
    val secondBytes = avroBytes(everything, second)
    for ((reader, expected) <- Seq(everything -> everythingRow, everythingPlus -> withExtra(everythingRow))) {
      val (dt, decoder) = (AvroTypes.sparkType(reader), new AvroDecoder(everything, reader))
      val decoded = decoder.decode(first, 0, first.length)
      val before = norm(decoded, dt)
      val next = decoder.decode(secondBytes, 0, secondBytes.length)
      assert(norm(decoded, dt) === before)
      same(decoded, expected, dt)
      assert(norm(next, dt) !== before)
    }
  }

  test("a struct fills a record by field name; a record field the struct lacks takes its default") {
    val schema = parse("""{"type": "record", "name": "R", "fields": [{"name": "c", "type": "string"},
      {"name": "a", "type": "int"}, {"name": "b", "type": {"type": "array", "items": "int"}, "default": [1, 2]}]}""")
    val struct = StructType(Seq(StructField("a", IntegerType), StructField("c", StringType)))
    val expected = new GenericData.Record(schema)
    expected.put("c", "see"); expected.put("a", 1); expected.put("b", java.util.Arrays.asList(1, 2))
    assert(new AvroEncoder(struct, schema).encode(row(1, str("see"))).toSeq === avroBytes(schema, expected).toSeq)
  }

  test("a struct of members writes a union of several types; null and at most one member") {
    val schema = parse("""["null", "string", "int"]""")
    val dt = AvroTypes.sparkType(schema)
    val (encoder, decoder) = (new AvroEncoder(dt, schema), new AvroDecoder(schema, schema))
    assert(encoder.encode(row(null, 5)).toSeq === avroBytes(schema, 5).toSeq)
    same(decoder.decode(encoder.encode(row(str("s"), null)), 0, 3), row(str("s"), null), dt)
    assert(encoder.encode(null).toSeq === Seq[Byte](0))
    assert(encoder.encode(row(null, null)).toSeq === Seq[Byte](0))
    val both = intercept[AvroConversionException](encoder.encode(row(str("s"), 5)))
    assert(both.getMessage.contains("member0 and member1"), both.getMessage)
  }

  test("errors name the field: a recursive record, decimal(40, 2), a Spark type that does not fit") {
    val recursive = parse("""{"type": "record", "name": "List", "fields": [{"name": "head", "type": {"type":
      "record", "name": "Node", "fields": [{"name": "next", "type": ["null", "Node"]}]}}]}""")
    for (attempt <- Seq(() => AvroTypes.sparkType(recursive), () => new AvroDecoder(recursive, recursive))) {
      val e = intercept[AvroConversionException](attempt())
      assert(e.getMessage.contains("record Node") && e.getMessage.contains("'head.next'"), e.getMessage)
    }
    val wide = parse("""{"type": "record", "name": "T", "fields": [{"name": "order", "type": {"type": "record",
      "name": "O", "fields": [{"name": "amount", "type": {"type": "bytes", "logicalType": "decimal",
      "precision": 40, "scale": 2}}]}}]}""")
    val e = intercept[AvroConversionException](AvroTypes.sparkType(wide))
    assert(e.getMessage.contains("decimal(40, 2)") && e.getMessage.contains("'order.amount'"), e.getMessage)
    val mismatch = intercept[AvroConversionException](new AvroEncoder(StructType(Seq(
            StructField("id", StringType))), parse(PersonJson)))
    assert(mismatch.getMessage.contains("'id'") && mismatch.getMessage.contains("string"), mismatch.getMessage)
  }

  test("errors name the field: a null the schema has no room for, missing and extra fields, an unknown symbol") {
    val person = parse(PersonJson)
    val dt = AvroTypes.sparkType(person).asInstanceOf[StructType]
    val nullable = StructType(dt.map(f =>
        f.copy(dataType = f.dataType match {
          case s: StructType => StructType(s.map(_.copy(nullable = true))); case other => other
        })))
    val encoder = new AvroEncoder(nullable, person)
    val noName = intercept[AvroConversionException](encoder.encode(row(1, row(null, str("GOLD")))))
    assert(noName.getMessage.contains("'customer.name'"), noName.getMessage)
    val clubs = intercept[AvroConversionException](encoder.encode(row(1, row(str("n"), str("CLUBS")))))
    assert(clubs.getMessage.contains("'customer.tier'") && clubs.getMessage.contains("CLUBS"), clubs.getMessage)
    // After failing half-way, the encoder writes a clean datum again.
    val good = new GenericData.Record(person)
    val customer = new GenericData.Record(person.getField("customer").schema)
    customer.put("name", "n"); customer.put("tier", new GenericData.EnumSymbol(customer.getSchema, "GOLD"))
    good.put("id", 1); good.put("customer", customer)
    assert(encoder.encode(row(1, row(str("n"), str("GOLD")))).toSeq === avroBytes(person, good).toSeq)

    val lacking = StructType(Seq(dt("id"),
        StructField("customer",
          StructType(Seq(dt("customer").dataType
                .asInstanceOf[StructType].apply("tier"))))))
    val missing = intercept[AvroConversionException](new AvroEncoder(lacking, person))
    assert(missing.getMessage.contains("'customer.name'"), missing.getMessage)
    val extra = intercept[AvroConversionException](new AvroEncoder(dt.add("extra", IntegerType), person))
    assert(extra.getMessage.contains("'extra'"), extra.getMessage)
  }

  test("value errors: a fixed of the wrong size, a decimal too large, a truncated datum") {
    val fixed = parse("""{"type": "record", "name": "F", "fields": [{"name": "key", "type": {"type": "fixed",
      "name": "K", "size": 4}}, {"name": "price", "type": {"type": "fixed", "name": "P", "size": 2,
      "logicalType": "decimal", "precision": 4, "scale": 1}}]}""")
    val encoder = new AvroEncoder(AvroTypes.sparkType(fixed), fixed)
    val size = intercept[AvroConversionException](encoder.encode(row(Array[Byte](1), Decimal(1))))
    assert(size.getMessage.contains("'key'") && size.getMessage.contains("exactly 4"), size.getMessage)
    val large = intercept[AvroConversionException](encoder.encode(row(Array[Byte](1, 2, 3, 4), Decimal(1000))))
    assert(large.getMessage.contains("'price'"), large.getMessage)
    val ok = encoder.encode(row(Array[Byte](1, 2, 3, 4), Decimal(new JBigDecimal("-12.34"), 4, 2)))
    same(new AvroDecoder(fixed, fixed).decode(ok, 0, ok.length),
      row(Array[Byte](1, 2, 3, 4),
        Decimal(new JBigDecimal("-12.3"), 4, 1)), AvroTypes.sparkType(fixed))
    val truncated = intercept[AvroConversionException](new AvroDecoder(fixed, fixed).decode(ok, 0, 3))
    assert(truncated.getMessage.contains("record F"), truncated.getMessage)
  }
}

object AvroConversionSuite {
  def parse(json: String): Schema = new Schema.Parser().parse(json)

  def avroBytes(schema: Schema, datum: Any): Array[Byte] = {
    val out = new ByteArrayOutputStream()
    val enc = EncoderFactory.get().binaryEncoder(out, null)
    new GenericDatumWriter[Any](schema).write(datum, enc)
    enc.flush()
    out.toByteArray
  }

  /** `unscaled` in `size` bytes of big-endian two's complement. */
  def twosComplement(unscaled: String, size: Int): Array[Byte] = {
    val b = new BigInteger(unscaled).toByteArray
    Array.fill[Byte](size - b.length)(if (b(0) < 0) -1 else 0) ++ b
  }

  /** Catalyst values as plain Scala values that compare by content (rows, arrays and maps as lists). */
  def norm(v: Any, dt: DataType): Any = CatalystValues.norm(v, dt,
    {
      case (b: Array[Byte], BinaryType) => b.toList
      case (f: Float, _) if f.isNaN => "NaN"
    })

  val PersonJson: String = """{"type": "record", "name": "Person", "fields": [{"name": "id", "type": "int"},
    {"name": "customer", "type": {"type": "record", "name": "Customer", "fields": [{"name": "name", "type": "string"},
    {"name": "tier", "type": {"type": "enum", "name": "Tier", "symbols": ["GOLD", "SILVER"]}}]}}]}"""

  val EverythingJson: String = """{"type": "record", "name": "Everything", "namespace": "test", "fields": [
    {"name": "b", "type": "boolean"}, {"name": "i", "type": "int"}, {"name": "l", "type": "long"},
    {"name": "f", "type": "float"}, {"name": "d", "type": "double"}, {"name": "s", "type": "string"},
    {"name": "bin", "type": "bytes"}, {"name": "fx", "type": {"type": "fixed", "name": "Four", "size": 4}},
    {"name": "e", "type": {"type": "enum", "name": "Suit", "symbols": ["HEARTS", "SPADES"]}},
    {"name": "n", "type": "null"}, {"name": "arr", "type": {"type": "array", "items": ["null", "int"]}},
    {"name": "m", "type": {"type": "map", "values": "double"}}, {"name": "opt", "type": ["null", "string"]},
    {"name": "optLast", "type": ["string", "null"]}, {"name": "il", "type": ["int", "long"]},
    {"name": "fd", "type": ["float", "double"]}, {"name": "multi", "type": ["null", "string", "int",
      {"type": "record", "name": "Point", "fields": [{"name": "x", "type": "int"}]}]},
    {"name": "date", "type": {"type": "int", "logicalType": "date"}},
    {"name": "tsMillis", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    {"name": "tsMicros", "type": {"type": "long", "logicalType": "timestamp-micros"}},
    {"name": "ltsMillis", "type": {"type": "long", "logicalType": "local-timestamp-millis"}},
    {"name": "ltsMicros", "type": {"type": "long", "logicalType": "local-timestamp-micros"}},
    {"name": "timeMillis", "type": {"type": "int", "logicalType": "time-millis"}},
    {"name": "timeMicros", "type": {"type": "long", "logicalType": "time-micros"}},
    {"name": "decBytes", "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2}},
    {"name": "decFixed", "type": {"type": "fixed", "name": "Dec16", "size": 16, "logicalType": "decimal",
      "precision": 30, "scale": 4}}, {"name": "uuid", "type": {"type": "string", "logicalType": "uuid"}},
    {"name": "nested", "type": {"type": "record", "name": "Inner", "fields": [{"name": "name", "type": "string"},
      {"name": "tags", "type": {"type": "array", "items": "string"}}]}},
    {"name": "unknownLogical", "type": {"type": "string", "logicalType": "something-else"}}]}"""
}
