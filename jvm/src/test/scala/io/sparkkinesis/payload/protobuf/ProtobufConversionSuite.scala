package io.sparkkinesis.payload.protobuf

import java.math.{BigDecimal => JBigDecimal}
import java.nio.charset.StandardCharsets.UTF_8

import scala.io.Source

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.catalyst.util.{ArrayBasedMapData, ArrayData, GenericArrayData, MapData}
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.testing.CatalystValues
import io.sparkkinesis.testing.CatalystValues.{arr, map, row, str}

import ProtoSchema._

/**
 * The `.proto` parser and the Protobuf <-> Catalyst conversions, checked against wire bytes written out by hand
 * (field 1 varint 150 is `08 96 01`): what they decode to, computed here by hand, and that the encoder writes the
 * same bytes back; the Glue message index order, schema evolution, and errors naming the element or field.
 */
class ProtobufConversionSuite extends AnyFunSuite {
  import ProtobufConversionSuite._

  private val shop = ProtoSchema.parse(resource("shop.proto"))
  private val legacy = ProtoSchema.parse(resource("legacy.proto"))
  private val orderType = ProtobufTypes.sparkType(shop, "shop.Order")

  private def same(actual: Any, expected: Any, dt: DataType): Unit = assert(norm(actual, dt) === norm(expected, dt))

  private def error(f: => Any): String = intercept[ProtobufConversionException](f).getMessage

  test("field 1 varint 150 is 08 96 01, after the message index") {
    val schema = ProtoSchema.parse("syntax = \"proto3\"; message Test1 { int32 a = 1; }")
    val dt = ProtobufTypes.sparkType(schema, "Test1")
    assert(dt === StructType(Seq(StructField("a", IntegerType, nullable = false))))
    val bytes = hex("00 08 96 01")
    same(new ProtobufDecoder(schema, schema, "Test1").decode(bytes, 0, bytes.length), row(150), dt)
    assert(hexOf(new ProtobufEncoder(dt, schema, "Test1").encode(row(150))) === "00 08 96 01")
    // Inside a larger buffer, at an offset.
    val padded = hex("FF FF 00 08 96 01 FF")
    same(new ProtobufDecoder(schema, schema, "Test1").decode(padded, 2, 4), row(150), dt)
  }

  test("the Glue message index is the position among all messages, nested and map entries too, by full name") {
    assert(shop.messages.map(_.fullName) === Seq("shop.Customer", "shop.Order", "shop.Order.AttributesEntry",
      "shop.Order.Line", "shop.Order.Line.Price", "shop.Order.Transfer"))
    assert(shop.indexOf("shop.Order.Line.Price") === 4)
    assert(shop.indexOf("Price") === 4)
    assert(shop.indexOf("Line.Price") === 4)
    assert(shop.message("shop.Order.AttributesEntry").mapEntry)
    // The brief's example: declaration order does not matter, full names do.
    val brief = ProtoSchema.parse("""syntax = "proto3"; package shop;
      message Order { message Line { message Price { int64 cents = 1; } Price price = 1; } repeated Line lines = 1; }
      message Customer { string name = 1; }""")
    assert(brief.messages.map(_.fullName).zipWithIndex === Seq("shop.Customer" -> 0, "shop.Order" -> 1,
      "shop.Order.Line" -> 2, "shop.Order.Line.Price" -> 3))
    assert(legacy.messages.map(_.fullName) === Seq("legacy.Event", "legacy.Event.Meta"))
  }

  test("the parser reads labels, maps, oneofs, enums, options and packed") {
    val order = shop.message("Order")
    assert(shop.syntax === "proto3" && shop.packageName === "shop")
    assert(order.fields.map(f => (f.name, f.number, f.label)) === Seq(("id", 1, Implicit), ("customer", 2, Implicit),
      ("lines", 3, Repeated), ("status", 4, Implicit), ("attributes", 5, Repeated), ("codes", 6, Repeated),
      ("deltas", 7, Repeated), ("card", 8, Optional), ("transfer", 9, Optional), ("weight", 10, Implicit),
      ("gift", 11, Implicit)))
    assert(order.field("customer").get.fieldType === MessageRef("shop.Customer"))
    assert(order.field("lines").get.fieldType === MessageRef("shop.Order.Line"))
    assert(order.field("status").get.fieldType === EnumRef("shop.Status"))
    assert(order.field("attributes").get.fieldType ===
      MapOf(Scalar("string"), Scalar("int32"), "shop.Order.AttributesEntry"))
    assert(order.fields.filter(_.oneof == "payment").map(_.name) === Seq("card", "transfer"))
    assert(order.field("deltas").get.packed === Some(false) && order.field("codes").get.packed === None)
    assert(shop.message("Price").field("currency").get.fieldType === EnumRef("shop.Order.Line.Price.Currency"))
    assert(shop.message("Customer").field("age").get.label === Optional)
    assert(shop.enums.find(_.fullName == "shop.Status").get.values.last === ("SENT" -> 2))
    val event = legacy.message("Event")
    assert(event.fields.map(_.label) === Seq(Required, Optional, Repeated, Repeated, Optional, Optional))
    assert(event.field("meta").get.fieldType === MessageRef("legacy.Event.Meta"))
    assert(event.field("packed_codes").get.packed === Some(true))
  }

  test("type names resolve from the innermost scope outwards, and fully qualified") {
    val schema = ProtoSchema.parse("""syntax = "proto3";
      package a.b;
      message Item { int32 top = 1; }
      message Outer {
        message Item { string inner = 1; }
        Item near = 1;
        .a.b.Item far = 2;
        b.Item by_package = 3;
        Inner.Deep deep = 4; // declared below
        message Inner { message Deep { bool ok = 1; } }
      }""")
    val outer = schema.message("a.b.Outer")
    assert(outer.fields.map(_.fieldType) === Seq(MessageRef("a.b.Outer.Item"), MessageRef("a.b.Item"),
      MessageRef("a.b.Item"), MessageRef("a.b.Outer.Inner.Deep")))
    assert(error(schema.message("Item")).contains("ambiguous"))
  }

  test("sparkType: the struct of a message, with nullability from labels") {
    val price = StructType(Seq(StructField("cents", DecimalType(20, 0), nullable = false),
        StructField("discount", IntegerType, nullable = false), StructField("rate", FloatType, nullable = false),
        StructField("currency", StringType, nullable = false)))
    val line = StructType(Seq(StructField("sku", StringType, nullable = false),
        StructField("quantity", LongType, nullable = false), StructField("price", price)))
    val transfer = StructType(Seq(StructField("iban", BinaryType, nullable = false),
        StructField("reference", DecimalType(20, 0), nullable = false),
        StructField("bank", IntegerType, nullable = false), StructField("branch", LongType, nullable = false),
        StructField("account", LongType, nullable = false)))
    val customer = StructType(Seq(StructField("name", StringType, nullable = false), StructField("age", IntegerType)))
    assert(orderType === StructType(Seq(StructField("id", LongType, nullable = false),
        StructField("customer", customer), StructField("lines", ArrayType(line, false), nullable = false),
        StructField("status", StringType, nullable = false),
        StructField("attributes", MapType(StringType, IntegerType, valueContainsNull = false), nullable = false),
        StructField("codes", ArrayType(IntegerType, false), nullable = false),
        StructField("deltas", ArrayType(LongType, false), nullable = false), StructField("card", StringType),
        StructField("transfer", transfer), StructField("weight", DoubleType, nullable = false),
        StructField("gift", BooleanType, nullable = false))))
    assert(ProtobufTypes.sparkType(legacy, "Event") === StructType(Seq(
        StructField("id", StringType, nullable = false), StructField("count", IntegerType),
        StructField("codes", ArrayType(IntegerType, false), nullable = false),
        StructField("packed_codes", ArrayType(IntegerType, false), nullable = false),
        StructField("kind", StringType), StructField("meta", StructType(Seq(StructField("note", StringType)))))))
  }

  test("a proto3 message decodes from hand-written bytes and encodes back to them") {
    val body = Seq(
      "08 96 01", // id = 150
      "12 06 0A 02 41 6C 10 1E", // customer { name = "Al", age = 30 }
      // lines [{ sku = "X", quantity = 3, price { cents = 2^64 - 1, discount = -3, rate = 1.5, currency = USD } }]
      "1A 1B 0A 01 58 10 03 1A 14 08 FF FF FF FF FF FF FF FF FF 01 10 05 1D 00 00 C0 3F 20 01",
      "20 02", // status = SHIPPED (2, also SENT: the first name is read)
      "2A 05 0A 01 6B 10 07", // attributes { "k": 7 }
      "32 0D 01 AC 02 FF FF FF FF FF FF FF FF FF 01", // codes = [1, 300, -1], packed
      "38 01 38 04", // deltas = [-1, 2], sint64, unpacked
      "42 01 63", // card = "c"
      "51 00 00 00 00 00 00 02 C0", // weight = -2.25
      "58 01") // gift = true
    val expected = row(150L, row(str("Al"), 30),
      arr(row(str("X"), 3L, row(Decimal(new JBigDecimal("18446744073709551615"), 20, 0), -3, 1.5f, str("USD")))),
      str("SHIPPED"), map("k" -> 7), arr(1, 300, -1), arr(-1L, 2L), str("c"), null, -2.25, true)
    val decoder = new ProtobufDecoder(shop, shop, "shop.Order")
    // Index 1, the body, and an unknown field 99 (varint 5), which is skipped.
    val bytes = hex(("01" +: body :+ "98 06 05").mkString(" "))
    same(decoder.decode(bytes, 0, bytes.length), expected, orderType)
    assert(hexOf(new ProtobufEncoder(orderType, shop, "Order").encode(expected)) === ("01" +: body).mkString(" "))
  }

  test("the other scalar types, a oneof's last member, and an empty message's defaults") {
    val transfer = "4A 20 0A 02 01 02 11 00 00 00 00 00 00 00 80 1D FE FF FF FF 25 FF FF FF FF " +
      "29 FF FF FF FF FF FF FF FF"
    val bytes = hex(s"01 42 01 63 $transfer")
    val expected = row(0L, null, arr(), str("STATUS_UNKNOWN"), map(), arr(), arr(), null,
      row(Array[Byte](1, 2), Decimal(new JBigDecimal("9223372036854775808"), 20, 0), -2, 4294967295L, -1L), 0.0,
      false)
    val decoder = new ProtobufDecoder(shop, shop, "Order")
    same(decoder.decode(bytes, 0, bytes.length), expected, orderType)
    assert(hexOf(new ProtobufEncoder(orderType, shop, "Order").encode(expected)) === s"01 $transfer")
    val defaults = row(0L, null, arr(), str("STATUS_UNKNOWN"), map(), arr(), arr(), null, null, 0.0, false)
    same(decoder.decode(hex("01"), 0, 1), defaults, orderType)
    // Defaults and nulls of proto3 fields without a label are not written.
    assert(hexOf(new ProtobufEncoder(orderType, shop, "Order").encode(defaults)) === "01")
  }

  test("repeated fields come packed or not; the last value of a field wins; a map's last entry for a key") {
    val decoder = new ProtobufDecoder(shop, shop, "Order")
    val bytes = hex("01 08 01 08 02 30 01 32 02 02 03 30 04 3A 02 01 04 2A 05 0A 01 6B 10 01 2A 05 0A 01 6B 10 02 " +
      "4A 00 42 01 63")
    val r = decoder.decode(bytes, 0, bytes.length).asInstanceOf[InternalRow]
    assert(r.getLong(0) === 2L)
    same(r.getArray(5), arr(1, 2, 3, 4), ArrayType(IntegerType))
    same(r.getArray(6), arr(-1L, 2L), ArrayType(LongType))
    same(r.getMap(4), map("k" -> 2), MapType(StringType, IntegerType))
    assert(r.getUTF8String(7) === str("c") && r.isNullAt(8)) // card after transfer clears it
  }

  test("enums: an unknown number reads as its decimal text and writes back") {
    val bytes = hex("01 20 07")
    val r = new ProtobufDecoder(shop, shop, "Order").decode(bytes, 0, 3).asInstanceOf[InternalRow]
    assert(r.getUTF8String(3) === str("7"))
    assert(hexOf(new ProtobufEncoder(orderType, shop, "Order").encode(r)) === "01 20 07")
    val e = error(new ProtobufEncoder(orderType, shop, "Order").encode(
        row(0L, null, arr(), str("LOST"), map(), arr(), arr(), null, null, 0.0, false)))
    assert(e.contains("'LOST'") && e.contains("field 'status'") && e.contains("shop.Status"))
  }

  test("proto2: required and optional, unpacked by default, packed on request") {
    val dt = ProtobufTypes.sparkType(legacy, "Event")
    val body = "0A 01 65 18 01 18 02 22 02 03 04" // id "e", codes [1, 2] unpacked, packed_codes [3, 4] packed
    // count is absent: it reads as its [default = 5], as protobuf's getters give it.
    val expected = row(str("e"), 5, arr(1, 2), arr(3, 4), null, null)
    same(new ProtobufDecoder(legacy, legacy, "Event").decode(hex(s"00 $body"), 0, 12), expected, dt)
    val absent = row(str("e"), null, arr(1, 2), arr(3, 4), null, null)
    assert(hexOf(new ProtobufEncoder(dt, legacy, "Event").encode(absent)) === s"00 $body")
    val full = row(str("e"), 0, arr(), arr(), str("B"), row(str("n")))
    val bytes = new ProtobufEncoder(dt, legacy, "Event").encode(full)
    assert(hexOf(bytes) === "00 0A 01 65 10 00 28 02 32 03 0A 01 6E") // optional zero written: it is present
    same(new ProtobufDecoder(legacy, legacy, "Event").decode(bytes, 0, bytes.length), full, dt)
    val missing = error(new ProtobufDecoder(legacy, legacy, "Event").decode(hex("00 10 01"), 0, 3))
    assert(missing.contains("required field 'id'") && missing.contains("legacy.Event"))
    val nullId = error(new ProtobufEncoder(dt, legacy, "Event").encode(row(null, null, arr(), arr(), null, null)))
    assert(nullId.contains("field 'id'") && nullId.contains("required"))
  }

  test("round trip: what the encoder writes decodes to the same values") {
    val encoder = new ProtobufEncoder(orderType, shop, "Order")
    val decoder = new ProtobufDecoder(shop, shop, "Order")
    val rows = Seq(
      row(-1L, row(str("Zoë ✓"), null),
        arr(row(str(""), 0L, null),
          row(str("y"), 4294967295L,
            row(Decimal(0L), Int.MinValue, Float.NaN, str("EUR")))), str("PLACED"), map("a" -> 1, "b" -> -2),
        arr(Int.MaxValue, Int.MinValue), arr(Long.MinValue, Long.MaxValue), null,
        row(Array[Byte](), Decimal(1L), 0, 0L, 0L), Double.NegativeInfinity, true),
      row(Long.MaxValue, row(str(""), 0), arr(), str("STATUS_UNKNOWN"), map(), arr(0), arr(0L), str(""), null,
        -0.0, false))
    rows.foreach { r =>
      val bytes = encoder.encode(r)
      same(decoder.decode(bytes, 0, bytes.length), r, orderType)
    }
  }

  test("rows stay valid after the next call and after the buffer changes") {
    val decoder = new ProtobufDecoder(shop, shop, "Order")
    val bytes = hex("01 12 04 0A 02 41 6C 1A 03 0A 01 58 30 01")
    val first = decoder.decode(bytes, 0, bytes.length).asInstanceOf[InternalRow]
    java.util.Arrays.fill(bytes, 1, bytes.length, 0x7F.toByte)
    decoder.decode(hex("01 1A 03 0A 01 5A 30 02 30 03"), 0, 10)
    same(first,
      row(0L, row(str("Al"), null), arr(row(str("X"), 0L, null)), str("STATUS_UNKNOWN"), map(), arr(1),
        arr(), null, null, 0.0, false), orderType)
  }

  test("schema evolution: fields by number, skipped when the reader lacks them, defaults when the writer does") {
    val v1 = ProtoSchema.parse("syntax = \"proto3\"; message User { string name = 1; int32 age = 2; }")
    val v2 = ProtoSchema.parse("""syntax = "proto3"; message Account { string id = 1; }
      message User { string name = 1; string email = 3; repeated string tags = 4; optional int64 score = 5; }""")
    val fromV1 = hex("00 0A 02 41 6C 10 1E")
    same(new ProtobufDecoder(v1, v2, "User").decode(fromV1, 0, fromV1.length), row(str("Al"), str(""), arr(), null),
      ProtobufTypes.sparkType(v2, "User"))
    // In v2 User is message 1 (Account is 0).
    val fromV2 = hex("01 0A 02 41 6C 1A 01 65 22 01 74 28 09")
    same(new ProtobufDecoder(v2, v1, "User").decode(fromV2, 0, fromV2.length), row(str("Al"), 0),
      ProtobufTypes.sparkType(v1, "User"))
    val wrong = error(new ProtobufDecoder(v2, v1, "User").decode(fromV1, 0, fromV1.length))
    assert(wrong.contains("index 0 is message Account") && wrong.contains("reads User") &&
      wrong.contains("User is message index 1"))
    assert(error(new ProtobufDecoder(v2, v1, "User").decode(hex("05 08 01"), 0, 3)).contains("index 5 is no message"))
    val other = ProtoSchema.parse("\uFEFFsyntax = \"proto3\"; message Other { int32 x = 1; }")
    val noUser = error(new ProtobufDecoder(other, v1, "User").decode(hex("00 08 01"), 0, 3))
    assert(noUser.contains("index 0 is message Other") && noUser.contains("the writer schema has no message User"))
    val minusOne = hex("FF FF FF FF FF FF FF FF FF 01")
    assert(error(new ProtobufDecoder(other, v1, "User").decode(minusOne, 0, 10)).contains("has no message User"))
  }

  test("schema errors name the line and element") {
    // Wire's messages name the place as schema.proto:line:column.
    val im = error(ProtoSchema.parse("syntax = \"proto3\";\nimport \"other.proto\";\nmessage A {}"))
    assert(im.contains("line 2") && im.contains("import 'other.proto' is another file"))
    val date = error(ProtoSchema.parse("syntax = \"proto3\";\nimport \"google/type/date.proto\";\nmessage A {}"))
    assert(date.contains("line 2") && date.contains("'google/type/date.proto' is one of Google's common protos"))
    val unknown = error(ProtoSchema.parse("syntax = \"proto3\";\n/* two\nlines */ message A {\n  Missing m = 1;\n}"))
    assert(unknown.contains("schema.proto:4:3") && unknown.contains("unable to resolve Missing") &&
      unknown.contains("field m"))
    val label = error(ProtoSchema.parse("syntax = \"proto2\";\nmessage A { int32 x = 1; }"))
    assert(label.contains("schema.proto:2:13") && label.contains("unexpected label: int32"))
    val twice = error(ProtoSchema.parse("syntax = \"proto3\"; message A { int32 x = 1; string y = 1; }"))
    assert(twice.contains("multiple fields share tag 1"))
    assert(error(ProtoSchema.parse("syntax = \"proto3\"; message A { int32 x = 1 }")).contains("expected ';'"))
    val edition = error(ProtoSchema.parse("edition = \"2023\";\nmessage A { int32 x = 1; }"))
    assert(edition.contains("Protobuf editions ('edition = ...') are not supported"))
    assert(error(shop.message("Nope")).contains("no message Nope"))
  }

  test("a message that contains itself has no Spark type: the error names the path") {
    val schema = ProtoSchema.parse("syntax = \"proto3\"; message Node { string v = 1; repeated Node children = 2; }")
    val e = error(ProtobufTypes.sparkType(schema, "Node"))
    assert(e.contains("Node contains itself") && e.contains("field 'children[]'"))
    assert(error(new ProtobufDecoder(schema, schema, "Node")).contains("children[]"))
  }

  test("encoder type checks name the field; values out of range throw when met") {
    val badId = StructType(orderType.fields.updated(0, StructField("id", StringType)))
    assert(error(new ProtobufEncoder(badId, shop, "Order")).contains("field 'id'"))
    val extra = StructType(Seq(StructField("nope", IntegerType)))
    assert(error(new ProtobufEncoder(extra, shop, "Order")).contains(
        "'nope' is not in the Protobuf message shop.Order"))
    val lines = StructType(Seq(StructField("lines", ArrayType(StructType(Seq(StructField("quantity", LongType)))))))
    val encoder = new ProtobufEncoder(lines, shop, "Order")
    assert(hexOf(encoder.encode(row(arr(row(3L))))) === "01 1A 02 10 03")
    assert(error(encoder.encode(row(arr(row(-1L))))).contains("field 'lines[].quantity'"))
    val both = StructType(Seq(StructField("card", StringType), StructField("transfer", StructType(Nil))))
    val oneof = error(new ProtobufEncoder(both, shop, "Order").encode(row(str("c"), row())))
    assert(oneof.contains("'card' and 'transfer'") && oneof.contains("oneof payment"))
  }

  test("Wire reads the schema: well-known imports, map_entry messages, package after a message, groups, extend") {
    val text = """syntax = "proto3";
      |import "google/protobuf/timestamp.proto";
      |message Event {
      |  google.protobuf.Timestamp at = 1;
      |  repeated AttrsEntry attrs = 2;
      |  message AttrsEntry {
      |    option map_entry = true;
      |    string key = 1;
      |    int64 value = 2;
      |  }
      |}
      |package audit;
      |""".stripMargin
    val schema = ProtoSchema.parse(text)
    assert(schema.messages.map(_.fullName) === Seq("audit.Event", "audit.Event.AttrsEntry"))
    // The well-known files come from wire-schema's own jar, not from another copy on Spark's class path.
    assert(ProtoFiles.ownCopy("google/protobuf/timestamp.proto").exists(_.contains("message Timestamp")))
    assert(ProtoFiles.ownCopy("google/protobuf/descriptor.proto").isDefined)
    val dt = ProtobufTypes.sparkType(schema, "Event")
    assert(dt("at").dataType === StructType(Seq(StructField("seconds", LongType, nullable = false),
        StructField("nanos", IntegerType, nullable = false))))
    assert(dt("attrs").dataType === MapType(StringType, LongType, valueContainsNull = false))
    // at = {seconds: 5, nanos: 7}; attrs {"k": 9}
    val body = hex("00 0A 04 08 05 10 07 12 05 0A 01 6B 10 09")
    val value = row(row(5L, 7), map("k" -> 9L))
    same(new ProtobufDecoder(schema, schema, "Event").decode(body, 0, body.length), value, dt)
    assert(hexOf(new ProtobufEncoder(dt, schema, "Event").encode(value)) === hexOf(body))

    // proto2: a group is read past (its message keeps index 1), an extension is no column.
    val groups = ProtoSchema.parse("""syntax = "proto2";
        |message A {
        |  optional group G = 1 { optional int32 a = 1; }
        |  optional int32 b = 2;
        |  extensions 100 to 200;
        |}
        |extend A { optional int32 e = 100; }
        |message B { optional int32 x = 1; }""".stripMargin)
    assert(groups.messages.map(_.fullName) === Seq("A", "A.G", "B"))
    assert(ProtobufTypes.sparkType(groups, "A").fieldNames.toSeq === Seq("b"))
    val withGroup = hex("00 0B 08 01 0C 10 02 A0 06 03") // G {a: 1}, b: 2, e: 3
    same(new ProtobufDecoder(groups, groups, "A").decode(withGroup, 0, withGroup.length), row(2),
      ProtobufTypes.sparkType(groups, "A"))
    assert(groups.indexOf("B") === 2)
  }

  test("closed enums: an unknown number is an unknown field; a message field that occurs twice is merged") {
    val schema = ProtoSchema.parse("""syntax = "proto2";
        |enum Kind { Z = 0; A = 1; B = 2; }
        |message M {
        |  optional Kind kind = 1 [default = B];
        |  repeated Kind kinds = 2;
        |  map<string, Kind> named = 3;
        |  optional Inner inner = 4;
        |}
        |message Inner { optional int32 x = 1; optional int32 y = 2; repeated int32 z = 3; }""".stripMargin)
    val dt = ProtobufTypes.sparkType(schema, "M")
    // kind 7 (unknown: the default B stays), kinds [1, 9, 2] (9 dropped), named {"a": 9} (dropped), {"b": 1}
    val body = hex("01 08 07 10 01 10 09 10 02 1A 05 0A 01 61 10 09 1A 05 0A 01 62 10 01")
    same(new ProtobufDecoder(schema, schema, "M").decode(body, 0, body.length),
      row(str("B"), arr(str("A"), str("B")), map("b" -> str("A")), null), dt)
    // inner {x: 1, z: [1]} then inner {y: 2, z: [2]}: one Inner {x: 1, y: 2, z: [1, 2]}
    val twice = hex("01 22 04 08 01 18 01 22 04 10 02 18 02")
    same(new ProtobufDecoder(schema, schema, "M").decode(twice, 0, twice.length),
      row(str("B"), arr(), map(), row(1, 2, arr(1, 2))), dt)
  }

  test("malformed bytes throw, naming the message") {
    val e = error(new ProtobufDecoder(shop, shop, "Order").decode(hex("01 12 05 0A"), 0, 4))
    assert(e.contains("shop.Order") && e.contains("past the end"))
  }
}

object ProtobufConversionSuite {
  def resource(name: String): String = {
    val source = Source.fromInputStream(getClass.getResourceAsStream(s"/protobuf/$name"), UTF_8.name)
    try source.mkString
    finally source.close()
  }

  /** Bytes from hex pairs separated by spaces: "08 96 01". */
  def hex(s: String): Array[Byte] = s.split(' ').filter(_.nonEmpty).map(Integer.parseInt(_, 16).toByte)
  def hexOf(b: Array[Byte]): String = b.map(x => f"${x & 0xFF}%02X").mkString(" ")

  /** Catalyst values as plain Scala values that compare by content (rows, arrays and maps as lists). */
  def norm(v: Any, dt: DataType): Any = CatalystValues.norm(v, dt,
    {
      case (b: Array[Byte], BinaryType) => b.toList
      case (d: Decimal, _) => d.toJavaBigDecimal
      case (f: Float, _) if f.isNaN => "NaN"
      case (d: Double, _) => java.lang.Double.doubleToLongBits(d) // -0.0 is not 0.0
    })
}
