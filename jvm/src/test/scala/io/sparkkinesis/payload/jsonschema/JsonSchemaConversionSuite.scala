package io.sparkkinesis.payload.jsonschema

import java.nio.charset.StandardCharsets.UTF_8
import java.time.{Instant, LocalDate}

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.catalyst.util.{ArrayBasedMapData, ArrayData, GenericArrayData, MapData}
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.testing.CatalystValues
import io.sparkkinesis.testing.CatalystValues.{arr, map, row, str}

/**
 * The JSON Schema <-> Catalyst conversions: the Spark type of a realistic order schema, JSON texts written out here
 * decoded to Catalyst values computed here by other means (java.time), the encoder's text decoded back, reused
 * buffers, and the errors' JSON pointer paths.
 */
class JsonSchemaConversionSuite extends AnyFunSuite {
  import JsonSchemaConversionSuite._

  private val orderType = JsonSchemaTypes.sparkType(OrderSchema).asInstanceOf[StructType]
  private def same(actual: Any, expected: Any, dt: DataType): Unit = assert(norm(actual, dt) === norm(expected, dt))
  private def decode(schema: String, json: String): Any = {
    val bytes = json.getBytes(UTF_8)
    new JsonSchemaDecoder(schema).decode(bytes, 0, bytes.length)
  }
  private def error(f: => Any): String = intercept[JsonSchemaConversionException](f).getMessage

  test("sparkType of an order schema: nested object, array of $ref'd objects, type arrays, enum, formats, maps") {
    val line = StructType(Seq(StructField("sku", StringType, nullable = false),
        StructField("quantity", LongType, nullable = false), StructField("price", DoubleType),
        StructField("tags", ArrayType(StringType, containsNull = false))))
    val expected = StructType(Seq(
        StructField("orderId", StringType, nullable = false), StructField("placedAt", TimestampType, nullable = false),
        StructField("deliveryDate", DateType), StructField("status", StringType, nullable = false),
        StructField("customer",
          StructType(Seq(StructField("id", LongType, nullable = false),
              StructField("name", StringType, nullable = false), StructField("vip", BooleanType))), nullable = false),
        StructField("lines", ArrayType(line, containsNull = false), nullable = false),
        StructField("total", DoubleType), StructField("coupon", StringType), StructField("giftNote", StringType),
        StructField("attributes", MapType(StringType, StringType, valueContainsNull = true)),
        StructField("metadata", MapType(StringType, StringType, valueContainsNull = true)),
        StructField("note", StringType), StructField("legacy", StringType)))
    assert(orderType === expected)
    // The top level may be any type; the other mappings.
    assert(JsonSchemaTypes.sparkType("""{"type": "array", "items": {"type": ["integer", "null"]}}""") ===
      ArrayType(LongType, containsNull = true))
    assert(JsonSchemaTypes.sparkType("""{"type": ["integer", "number"]}""") === DoubleType)
    assert(JsonSchemaTypes.sparkType("""{"const": "x"}""") === StringType)
    assert(JsonSchemaTypes.sparkType("""{"anyOf": [{"type": "integer"}, {"type": "null", "title": "none"}]}""") ===
      LongType)
    assert(JsonSchemaTypes.sparkType("""{"type": "null"}""") === NullType)
    assert(JsonSchemaTypes.sparkType("""{"type": "string", "format": "date"}""") === DateType)
    for (raw <- Seq("{}", "true", """{"allOf": [{"type": "string"}]}""", """{"type": ["string", "integer"]}""",
        """{"properties": {"a": {"type": "string"}}}""", """{"enum": ["a", 1]}"""))
      assert(JsonSchemaTypes.sparkType(raw) === StringType, raw)
    assert(JsonSchemaTypes.sparkType("""{"type": "array"}""") === ArrayType(StringType, containsNull = true))
    val closed = """{"type": "object", "additionalProperties": false}"""
    assert(JsonSchemaTypes.sparkType(closed) === StructType(Nil))
  }

  test("decodes a JSON text, at an offset, to values computed independently; unknown properties skipped") {
    val bytes = OrderJson.getBytes(UTF_8)
    val framed = Array.fill[Byte](5)(0) ++ bytes ++ "{}".getBytes(UTF_8) // a header before, bytes after
    val decoded = new JsonSchemaDecoder(OrderSchema).decode(framed, 5, bytes.length)
    same(decoded, OrderRow, orderType)
  }

  test("missing properties are null; a date-time's offset is applied; an integer fits a number") {
    val json = """{"status": "NEW", "lines": [], "placedAt": "2024-01-02t04:34:05+01:30", "orderId": "o-2",
      "customer": {"id": 1, "name": "Bo"}, "total": 3, "deliveryDate": null}"""
    val expected = row(str("o-2"), micros("2024-01-02T03:04:05Z"), null, str("NEW"), row(1L, str("Bo"), null), arr(),
      3.0, null, null, null, null, null, null)
    same(decode(OrderSchema, json), expected, orderType)
    assert(decode("""{"type": "integer"}""", "5.0") === 5L)
    assert(decode("""{"type": "integer"}""", "-9223372036854775808") === Long.MinValue)
    same(decode("""{"type": "array", "items": {"type": "integer"}}""", " [1, 2] "), arr(1L, 2L), ArrayType(LongType))
    assert(decode("""{"type": "string", "format": "date"}""", "\"1969-12-31\"") === -1)
    assert(decode("""{}""", """ {"a" : [1.50, "x"]} """) === str("""{"a":[1.50,"x"]}"""))
    assert(decode("""{"type": "string"}""", "null") === null)
  }

  test("a decoded row stays as it was after the decoder reads the next text") {
    val decoder = new JsonSchemaDecoder(OrderSchema)
    val first = OrderJson.getBytes(UTF_8)
    val decoded = decoder.decode(first, 0, first.length)
    val before = norm(decoded, orderType)
    val second = OrderJson.replace("A-1", "Z-9").replace("yes", "no").replace("\"version\": 3", "\"version\": 4")
      .getBytes(UTF_8)
    val next = decoder.decode(second, 0, second.length)
    assert(norm(decoded, orderType) === before)
    same(decoded, OrderRow, orderType)
    assert(norm(next, orderType) !== before)
  }

  test("encodes JSON text that decodes back to the same values") {
    val encoder = new JsonSchemaEncoder(orderType, OrderSchema)
    val decoder = new JsonSchemaDecoder(OrderSchema)
    val sparse =
      row(str("o-3"), -1L, -1, str("SHIPPED"), row(2L, str("Cy"), false), arr(row(str("s"), 1L, null, arr())),
        null, null, null, map(), map("k" -> null), null, null)
    for (value <- Seq(OrderRow, sparse)) {
      val bytes = encoder.encode(value)
      same(decoder.decode(bytes, 0, bytes.length), value, orderType)
    }
    val text = new String(encoder.encode(sparse), UTF_8)
    assert(text === """{"orderId":"o-3","placedAt":"1969-12-31T23:59:59.999999Z","deliveryDate":"1969-12-31",""" +
      """"status":"SHIPPED","customer":{"id":2,"name":"Cy","vip":false},""" +
      """"lines":[{"sku":"s","quantity":1,"tags":[]}],""" +
      """"attributes":{},"metadata":{"k":null}}""")
    // Fields the schema does not name, where it allows them, are written as plain JSON.
    val schema = """{"type": "object", "properties": {"a": {"type": "integer"}}}"""
    val st = StructType(Seq(StructField("b", DateType), StructField("a", IntegerType),
        StructField("c", ArrayType(DoubleType))))
    val plain = new String(new JsonSchemaEncoder(st, schema).encode(row(19723, 5, arr(1.5, null))), UTF_8)
    assert(plain === """{"a":5,"b":"2024-01-01","c":[1.5,null]}""")
  }

  test("decode errors name the path and what was found") {
    val wrongType = error(decode(OrderSchema, OrderJson.replace("\"quantity\": 2", "\"quantity\": \"two\"")))
    assert(wrongType.contains("#/properties/lines/items/properties/quantity") && wrongType.contains("'two'"),
      wrongType)
    val requiredNull = error(decode(OrderSchema, OrderJson.replace("\"o-1\"", "null")))
    assert(requiredNull.contains("null at #/properties/orderId"), requiredNull)
    val missing = error(decode(OrderSchema, OrderJson.replace("\"name\": \"Ann\", ", "")))
    assert(missing.contains("'name'") && missing.contains("#/properties/customer"), missing)
    val notObject = error(decode(OrderSchema, OrderJson.replace("\"gift\": \"yes\"", "\"gift\": [1]")))
    assert(notObject.contains("#/properties/attributes/additionalProperties") && notObject.contains("an array"),
      notObject)
    val badDate = error(decode(OrderSchema, OrderJson.replace("2024-01-05", "2024-02-30")))
    assert(badDate.contains("#/properties/deliveryDate") && badDate.contains("2024-02-30"), badDate)
    val big = error(decode("""{"type": "integer"}""", "9223372036854775808"))
    assert(big.contains("#") && big.contains("beyond a long"), big)
    assert(error(decode(OrderSchema, "{\"orderId\": ")).contains("cannot decode"))
    assert(error(decode("""{"type": "integer"}""", "1 2")).contains("more than one JSON value"))
  }

  test("encode errors name the path and the rule") {
    val encoder = new JsonSchemaEncoder(orderType, OrderSchema)
    def withField(i: Int, value: Any): InternalRow = {
      val values = orderType.fields.indices.map(j => OrderRow.get(j, orderType(j).dataType)).toArray[Any]
      values(i) = value
      new GenericInternalRow(values)
    }
    val lost = error(encoder.encode(withField(3, str("LOST"))))
    assert(lost.contains("#/properties/status") && lost.contains("enum") && lost.contains("'LOST'"), lost)
    val long = error(encoder.encode(withField(0, str("o-1234567890123"))))
    assert(long.contains("#/properties/orderId") && long.contains("maxLength 12"), long)
    // After failing half-way, the encoder writes a clean text again.
    val again = encoder.encode(OrderRow)
    same(new JsonSchemaDecoder(OrderSchema).decode(again, 0, again.length), OrderRow, orderType)
    val requiredNull = error(encoder.encode(withField(0, null)))
    assert(requiredNull.contains("'orderId'") && requiredNull.contains("is null"), requiredNull)
    val zero = error(encoder.encode(withField(5, arr(row(str("s"), 0L, null, null)))))
    assert(zero.contains("#/properties/lines/items/properties/quantity") && zero.contains("minimum 1"), zero)
    val negative = error(encoder.encode(withField(6, -0.5)))
    assert(negative.contains("#/properties/total") && negative.contains("minimum 0"), negative)
    val gift = error(encoder.encode(withField(8, str("x" * 41))))
    assert(gift.contains("#/properties/giftNote/oneOf/1") && gift.contains("maxLength 40"), gift)
    // At construction: a field a closed object lacks, a type that does not fit, a missing required property.
    def lineAs(line: StructType) =
      StructType(orderType.fields.map(f => if (f.name == "lines") f.copy(dataType = ArrayType(line)) else f))
    val itemType = orderType("lines").dataType.asInstanceOf[ArrayType].elementType.asInstanceOf[StructType]
    val color = error(new JsonSchemaEncoder(lineAs(itemType.add("color", StringType)), OrderSchema))
    assert(color.contains("'color'") && color.contains("#/properties/lines/items"), color)
    val quantity = error(new JsonSchemaEncoder(lineAs(StructType(itemType.fields.map(f =>
              if (f.name == "quantity") f.copy(dataType = StringType) else f))), OrderSchema))
    assert(quantity.contains("#/properties/lines/items/properties/quantity") && quantity.contains("string"), quantity)
    val noSku = error(new JsonSchemaEncoder(lineAs(StructType(itemType.fields.filter(_.name != "sku"))), OrderSchema))
    assert(noSku.contains("'sku'") && noSku.contains("#/properties/lines/items"), noSku)
    val raw = error(encoder.encode(withField(11, str("{not json"))))
    assert(raw.contains("#/properties/note"), raw)
  }

  test("draft-04 definitions and exclusive bounds, later drafts' numeric exclusive bounds, const") {
    val draft4 = """{"$schema": "http://json-schema.org/draft-04/schema#", "type": "object",
      "definitions": {"Money": {"type": "number", "minimum": 0, "exclusiveMinimum": true}},
      "properties": {"price": {"$ref": "#/definitions/Money"}, "kind": {"type": "string", "const": "sale"},
        "pct": {"type": "integer", "exclusiveMaximum": 100}}}"""
    val dt = JsonSchemaTypes.sparkType(draft4)
    assert(dt === StructType(Seq(StructField("price", DoubleType), StructField("kind", StringType),
        StructField("pct", LongType))))
    val encoder = new JsonSchemaEncoder(dt, draft4)
    assert(new String(encoder.encode(row(0.01, str("sale"), 99L)),
      UTF_8) === """{"price":0.01,"kind":"sale","pct":99}""")
    val zero = error(encoder.encode(row(0.0, null, null)))
    assert(zero.contains("#/properties/price") && zero.contains("minimum 0 (exclusive)"), zero)
    val hundred = error(encoder.encode(row(null, null, 100L)))
    assert(hundred.contains("#/properties/pct") && hundred.contains("exclusiveMaximum 100"), hundred)
    val kind = error(encoder.encode(row(null, str("rent"), null)))
    assert(kind.contains("#/properties/kind") && kind.contains("const"), kind)
    same(decode(draft4, """{"pct": 7, "price": 1}"""), row(1.0, null, 7L), dt)
  }

  test("schema errors name the path: a recursive $ref, a $ref to nothing, an unknown type") {
    val recursive = """{"type": "object", "properties": {"head": {"$ref": "#/$defs/Node"}},
      "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}}}"""
    for (attempt <- Seq(() => JsonSchemaTypes.sparkType(recursive), () => new JsonSchemaDecoder(recursive))) {
      val e = error(attempt())
      assert(e.contains("#/properties/head/properties/next") && e.contains("#/$defs/Node") && e.contains("recursive"),
        e)
    }
    val self = error(JsonSchemaTypes.sparkType("""{"type": "array", "items": {"$ref": "#"}}"""))
    assert(self.contains("#/items") && self.contains("recursive"), self)
    val nowhere = error(JsonSchemaTypes.sparkType("""{"type": "array", "items": {"$ref": "#/definitions/X"}}"""))
    assert(nowhere.contains("#/items") && nowhere.contains("#/definitions/X"), nowhere)
    val unknown = error(JsonSchemaTypes.sparkType("""{"type": "object", "properties": {"a": {"type": "date"}}}"""))
    assert(unknown.contains("#/properties/a") && unknown.contains("'date'"), unknown)
  }
}

object JsonSchemaConversionSuite {

  /** Microseconds since the epoch of an ISO-8601 instant, by java.time. */
  def micros(iso: String): Long = {
    val i = Instant.parse(iso)
    i.getEpochSecond * 1000000L + i.getNano / 1000
  }

  def days(iso: String): Int = LocalDate.parse(iso).toEpochDay.toInt

  /** Catalyst values as plain Scala values that compare by content (rows, arrays and maps as lists). */
  def norm(v: Any, dt: DataType): Any = CatalystValues.norm(v, dt)

  val OrderSchema: String = """{
    "$schema": "https://json-schema.org/draft/2020-12/schema", "title": "Order", "type": "object",
    "properties": {
      "orderId": {"type": "string", "maxLength": 12},
      "placedAt": {"type": "string", "format": "date-time"},
      "deliveryDate": {"type": ["string", "null"], "format": "date"},
      "status": {"enum": ["NEW", "PAID", "SHIPPED"]},
      "customer": {"type": "object", "required": ["id", "name"], "properties": {
        "id": {"type": "integer", "minimum": 1}, "name": {"type": "string"}, "vip": {"type": "boolean"}}},
      "lines": {"type": "array", "items": {"$ref": "#/$defs/Line"}},
      "total": {"type": "number", "minimum": 0},
      "coupon": {"type": ["string", "null"]},
      "giftNote": {"oneOf": [{"type": "null"}, {"type": "string", "maxLength": 40}]},
      "attributes": {"type": "object", "additionalProperties": {"type": "string"}},
      "metadata": {"type": "object"},
      "note": {"anyOf": [{"type": "string"}, {"type": "object"}]},
      "legacy": {"description": "no type: any value"}
    },
    "required": ["orderId", "placedAt", "status", "customer", "lines"],
    "$defs": {
      "Line": {"type": "object", "additionalProperties": false, "required": ["sku", "quantity"], "properties": {
        "sku": {"type": "string"}, "quantity": {"type": "integer", "minimum": 1, "maximum": 1000},
        "price": {"type": "number"}, "tags": {"type": "array", "items": {"type": "string"}}}}
    }
  }"""

  val OrderJson: String = """{"orderId": "o-1", "placedAt": "2024-01-02T03:04:05.006Z", "deliveryDate": "2024-01-05",
    "status": "PAID", "customer": {"name": "Ann", "id": 7, "extra": {"deep": [1, {"x": null}]}},
    "lines": [{"sku": "A-1", "quantity": 2, "price": 9.5, "tags": ["red", "big"]},
      {"quantity": 1, "price": 10, "sku": "B-2"}],
    "total": 29, "coupon": null, "giftNote": "for you", "attributes": {"gift": "yes", "channel": "web"},
    "metadata": {"source": "app", "version": 3, "flags": [true, null], "ratio": 1.10, "none": null},
    "note": {"text": "leave at door", "floor": 2}, "legacy": "old", "unknown": [1, {"x": 2}]}"""

  /** OrderJson as Catalyst values, written out by hand. */
  val OrderRow: InternalRow = row(str("o-1"), micros("2024-01-02T03:04:05.006Z"), days("2024-01-05"), str("PAID"),
    row(7L, str("Ann"), null),
    arr(row(str("A-1"), 2L, 9.5, arr(str("red"), str("big"))), row(str("B-2"), 1L, 10.0, null)),
    29.0, null, str("for you"), map("gift" -> str("yes"), "channel" -> str("web")),
    map("source" -> str("\"app\""), "version" -> str("3"), "flags" -> str("[true,null]"), "ratio" -> str("1.10"),
      "none" -> null),
    str("""{"text":"leave at door","floor":2}"""), str("\"old\""))
}
