package io.sparkkinesis.payload.jsonschema

import java.nio.charset.StandardCharsets.UTF_8

import scala.util.{Failure, Random, Success, Try}

import io.sparkkinesis.compat.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode
import com.networknt.schema.{InputFormat, SchemaRegistry, SpecificationVersion}
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.util.{ArrayBasedMapData, ArrayData, GenericArrayData, MapData}
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.testing.CatalystValues

/**
 * The JSON Schema encoder against a conforming validator (networknt's json-schema-validator, format assertions on):
 * generated schemas (drafts 7 and 2020-12, as producers write them) and values, seeded. For each value, what the
 * encoder accepts is what the validator accepts, and the decoder reads back what it wrote. The validator judges the
 * value's JSON as the encoder writes it under the same schema stripped of its assertions.
 */
class JsonSchemaReferenceSuite extends AnyFunSuite {
  import JsonSchemaReferenceSuite._

  private val registry = SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12)

  /** The validator's errors for `json` under `schema`, formats asserted. */
  private def referenceErrors(schema: String, json: String): Seq[String] = {
    val errors = registry.getSchema(schema).validate(json, InputFormat.JSON,
      (ctx: com.networknt.schema.ExecutionContext) => ctx.executionConfig(b => { b.formatAssertionsEnabled(true); () }))
    (0 until errors.size).map(i => errors.get(i).toString)
  }

  test(s"generated schemas and values: the encoder accepts exactly what the validator accepts ($Schemas schemas)") {
    val seed = sys.env.getOrElse("SPARK_KINESIS_TEST_SEED", "5101").toLong
    val rnd = new Random(seed)
    var cases, accepted, variants = 0
    (0 until Schemas).foreach { n =>
      val draft = if (n % 2 == 0) Draft2020 else Draft7
      val gen = new Gen(rnd, draft)
      val top = gen.objectNode(depth = 0)
      val schema = gen.document(top.schema)
      val stripped = gen.document(top.stripped, stripped = true)
      def where = s"seed $seed, schema #$n: $schema"
      val dt = Try(JsonSchemaTypes.sparkType(schema)) match {
        case Success(t) => t
        case Failure(e) => fail(s"$where: sparkType failed: $e")
      }
      assert(dt === top.dt, where)
      val ours = Try(new JsonSchemaEncoder(dt, schema)).fold(e => fail(s"$where: the encoder refused it: $e"), identity)
      val plain = new JsonSchemaEncoder(dt, stripped)
      val decoder = new JsonSchemaDecoder(schema)
      (0 until ValuesPerSchema).foreach { _ =>
        val value = top.value(rnd)
        cases += 1
        val json = Try(new String(plain.encode(value), UTF_8))
          .fold(e => fail(s"$where: the stripped schema refused a value: $e"), identity)
        val errors = referenceErrors(schema, json)
        val mine = Try(ours.encode(value))
        def detail = s"$where\n  value: $json\n  ours: ${mine.fold(_.toString, b => new String(b, UTF_8))}\n" +
          s"  reference: ${if (errors.isEmpty) "valid" else errors.mkString("; ")}"
        assert(mine.isSuccess === errors.isEmpty, detail)
        mine.foreach { bytes =>
          accepted += 1
          assert(new String(bytes, UTF_8) === json, detail)
          val back = decoder.decode(bytes, 0, bytes.length)
          assert(CatalystValues.norm(back, dt, leaves) === CatalystValues.norm(value, dt, leaves), detail)
          // The same value as another producer may write it: properties in another order, whitespace, every
          // non-ASCII character escaped, whole numbers as 7.0. The validator still accepts it, and the decoder
          // reads the same value from it.
          val variant = JsonSchemaReferenceSuite.variant(JsonMapper.readTree(bytes), rnd)
          assert(referenceErrors(schema, variant).isEmpty, s"$detail\n  variant: $variant")
          val variantBytes = variant.getBytes(UTF_8)
          val read = Try(decoder.decode(variantBytes, 0, variantBytes.length))
          assert(read.isSuccess, s"$detail\n  variant: $variant\n  read: $read")
          assert(unordered(read.get, dt) === unordered(back, dt),
            s"$detail\n  variant: $variant")
          variants += 1
        }
      }
    }
    info(s"$cases values of $Schemas schemas (seed $seed), $accepted accepted; each of those read back, and " +
      s"read again as another producer could write it ($variants texts)")
    assert(accepted > cases / 8 && accepted < cases * 7 / 8, "both outcomes are well represented")
  }

  test("keywords the encoder cannot enforce are refused by name, with what to do") {
    val cases = Seq(
      """{"type": "object", "properties": {"a": {"type": "string"}}, "unevaluatedProperties": false}""" ->
        "unevaluatedProperties",
      """{"type": "array", "items": {"type": "string"}, "unevaluatedItems": false}""" -> "unevaluatedItems",
      """{"type": "string", "format": "uri"}""" -> "format 'uri'",
      """{"type": "string", "pattern": "(unclosed"}""" -> "pattern '(unclosed'",
      """{"$defs": {"n": {"$dynamicRef": "#n"}}, "type": "object", "properties": {"a": {"$ref": "#/$defs/n"}}}""" ->
        "$dynamicRef",
      """{"$defs": {"s": {"type": "string"}}, "type": "object", "properties": {"a": {"$ref": "#/$defs/s",
        |"maxLength": 2}}}""".stripMargin -> "maxLength beside the $ref",
      """{"type": "object", "properties": {"a": {"oneOf": [{"type": "string"}, {"type": "null"}], "minLength": 1}}}""" ->
        "minLength beside the oneOf")
    for ((schema, keyword) <- cases) {
      val dt = JsonSchemaTypes.sparkType(schema)
      val e = intercept[JsonSchemaUnsupported](new JsonSchemaEncoder(dt, schema))
      assert(e.problem.contains(keyword), schema)
      assert(e.fix.nonEmpty)
      // The decoder reads such schemas: it checks nothing, it reads.
      new JsonSchemaDecoder(schema)
    }
    // Beside a $ref, draft-07 ignores the other keywords, as the validator does: the schema is not refused.
    val draft7 = """{"$schema": "http://json-schema.org/draft-07/schema#", "definitions": {"s": {"type": "string"}},
      |"type": "object", "properties": {"a": {"$ref": "#/definitions/s", "maxLength": 2}}}""".stripMargin
    val written = new JsonSchemaEncoder(JsonSchemaTypes.sparkType(draft7), draft7)
      .encode(new GenericInternalRow(Array[Any](UTF8String.fromString("long text"))))
    assert(referenceErrors(draft7, new String(written, UTF_8)).isEmpty)
    // A $ref outside the document was refused before: the type itself is unknown.
    val outside = """{"type": "object", "properties": {"a": {"$ref": "other.json#/x"}}}"""
    assert(intercept[JsonSchemaConversionException](JsonSchemaTypes.sparkType(outside)).getMessage
        .contains("other.json"))
  }

  test("the checked formats against the validator, value by value") {
    for ((format, values) <- FormatValues; v <- values) {
      val schema = s"""{"type": "string", "format": "$format"}"""
      val json = CatalystValues.str(v)
      val ours = Try(new JsonSchemaEncoder(StringType, schema).encode(json))
      val plain = new JsonSchemaEncoder(StringType, """{"type": "string"}""").encode(json)
      val errors = referenceErrors(schema, new String(plain, UTF_8))
      assert(ours.isSuccess === errors.isEmpty, s"format $format, value '$v': ours $ours, reference $errors")
    }
  }
}

object JsonSchemaReferenceSuite {
  val Schemas = 400
  val ValuesPerSchema = 8

  val Draft2020 = "https://json-schema.org/draft/2020-12/schema"
  val Draft7 = "http://json-schema.org/draft-07/schema#"

  /** Leaves compared by content: bytes, decimals, NaN. */
  private val leaves: PartialFunction[(Any, DataType), Any] = {
    case (d: Double, _) => java.lang.Double.doubleToLongBits(d)
    // Text that is JSON (a value written as text where the schema falls back to it) by its meaning: non-BMP
    // characters come back escaped, numbers as written, and the text null reads back as null.
    case (s: UTF8String, _) =>
      Try(JsonMapper.readTree(s.toString)).toOption.filter(t => t != null && !t.isMissingNode).map(canon)
        .getOrElse(s.toString)
  }

  /** [[leaves]], maps whatever the order of their entries, and -0.0 as 0 (a text may write either). */
  private def unordered(v: Any, dt: DataType): Any = (v, dt) match {
    case (null, _) => null
    case (r: InternalRow, st: StructType) =>
      st.fields.indices.map(i => if (r.isNullAt(i)) null else unordered(r.get(i, st(i).dataType), st(i).dataType))
        .toList
    case (a: ArrayData, ArrayType(et, _)) =>
      (0 until a.numElements()).map(i => if (a.isNullAt(i)) null else unordered(a.get(i, et), et)).toList
    case (m: MapData, MapType(kt, vt, _)) =>
      unordered(m.keyArray(), ArrayType(kt)).asInstanceOf[List[Any]]
        .zip(unordered(m.valueArray(), ArrayType(vt)).asInstanceOf[List[Any]]).toMap
    case (d: Double, _) => java.lang.Double.doubleToLongBits(d + 0.0) // -0.0 and 0 are one JSON number
    case leaf if leaves.isDefinedAt(leaf) => leaves(leaf)
    case _ => v
  }
  private val JsonMapper = new com.fasterxml.jackson.databind.ObjectMapper()
    .enable(com.fasterxml.jackson.databind.DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)

  /** A JSON value compared by meaning: numbers by value, objects whatever their order. */
  private def canon(n: JsonNode): Any =
    if (n.isNull) null
    else if (n.isNumber) n.decimalValue.stripTrailingZeros
    else if (n.isTextual) n.textValue
    else if (n.isBoolean) n.booleanValue
    else if (n.isArray) (0 until n.size).map(i => canon(n.get(i))).toList
    else n.properties.asScala.map(e => e.getKey -> canon(e.getValue)).toMap

  /** `n` as JSON text written otherwise: shuffled properties, spaces and line breaks, \\u escapes, 7 as 7.0. */
  def variant(n: JsonNode, rnd: Random): String = {
    def str(s: String) = s.flatMap {
      case '"' => "\\\""
      case '\\' => "\\\\"
      case c if c < 0x20 || c > 0x7E => f"\\u${c.toInt}%04x"
      case c => c.toString
    }
    if (n.isObject)
      rnd.shuffle(n.properties.asScala.toSeq).map(e => "\n  \"" + str(e.getKey) + "\" : " + variant(e.getValue, rnd))
        .mkString("{", ",", " }")
    else if (n.isArray) (0 until n.size).map(i => variant(n.get(i), rnd)).mkString("[ ", " , ", " ]")
    else if (n.isTextual) "\"" + str(n.textValue) + "\""
    else if (n.isIntegralNumber && rnd.nextBoolean()) n.asText + ".0"
    else n.toString
  }

  val FormatValues: Seq[(String, Seq[String])] = Seq(
    "date" -> Seq("2024-02-29", "2023-02-29", "2024-13-01", "24-01-01", "2024-1-01", "2024-01-01T00:00:00Z"),
    "time" -> Seq("12:30:00Z", "12:30:00.123+01:00", "24:00:00Z", "12:60:00Z", "12:30:00", "1:30:00Z"),
    "date-time" -> Seq("2024-01-02T03:04:05Z", "2024-01-02t03:04:05.5z", "2024-01-02 03:04:05Z",
      "2024-01-02T03:04:05+05:30", "2024-01-02T03:04:05", "2024-02-30T00:00:00Z"),
    "email" -> Seq("a@example.com", "first.last@sub.example.org", "no-at-sign", "a@", "@example.com",
      "a..b@example.com", "a@[192.0.2.1]"),
    "ipv4" -> Seq("192.168.0.1", "0.0.0.0", "255.255.255.255", "256.1.1.1", "01.2.3.4", "1.2.3", "1.2.3.4.5"),
    "ipv6" -> Seq("::1", "::", "2001:db8::8a2e:370:7334", "1:2:3:4:5:6:7:8", "1::2::3", "1:2:3:4:5:6:7:8:9",
      "::ffff:192.0.2.1", "12345::", "g::1"),
    "uuid" -> Seq("123e4567-e89b-12d3-a456-426614174000", "123E4567-E89B-12D3-A456-426614174000",
      "123e4567e89b12d3a456426614174000", "123e4567-e89b-12d3-a456-42661417400"),
    "hostname" -> Seq("example.com", "a-b.example", "-bad.com", "bad-.com", "a" * 64 + ".com", "xn--nxasmq6b.com"),
    "json-pointer" -> Seq("", "/a/b", "/a~0b/c~1d", "a/b", "/a~2"),
    "regex" -> Seq("^[a-z]+$", "(unclosed", "a{2,3}"))

  /** A generated schema node: its text, the same without assertions, its Spark type and a value generator. */
  final case class Node(schema: String, stripped: String, dt: DataType, nullable: Boolean, value: Random => Any)

  private def q(s: String): String = "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\""

  /** Schema and value generator of one document. */
  final class Gen(rnd: Random, draft: String) {
    private val defs = scala.collection.mutable.LinkedHashMap[String, (String, String)]()
    private val defsKey = if (draft == Draft2020) s"$$defs" else "definitions"

    def document(body: String, stripped: Boolean = false): String = {
      val d = if (defs.isEmpty) ""
      else
        defs.map { case (k, v) => s"${q(k)}: ${if (stripped) v._2 else v._1}" }
          .mkString(s""", ${q(defsKey)}: {""", ", ", "}")
      s"""{"$$schema": ${q(draft)}, "title": "generated", ${body.trim.stripPrefix("{")}""".stripSuffix("}") + d + "}"
    }

    private def pick[T](xs: T*): T = xs(rnd.nextInt(xs.size))
    private def chance(p: Double): Boolean = rnd.nextDouble() < p

    private def keywords(pairs: Seq[(String, String)]): String = pairs.map { case (k, v) => s", ${q(k)}: $v" }.mkString

    /** A nullable copy: a type array with "null", or a oneOf with {"type": "null"}. */
    private def orNull(n: Node): Node = {
      val schema = n.schema
      if (chance(0.5) && schema.startsWith("{\"type\": \""))
        Node(schema.replaceFirst("\"type\": (\"[a-z]+\")", "\"type\": [$1, \"null\"]"),
          n.stripped.replaceFirst("\"type\": (\"[a-z]+\")", "\"type\": [$1, \"null\"]"), n.dt, nullable = true,
          r => if (r.nextInt(4) == 0) null else n.value(r))
      else {
        val (a, b) = if (chance(0.5)) ("""{"type": "null"}""", "%s") else ("%s", """{"type": "null"}""")
        Node(s"""{"oneOf": [${a.format(n.schema)}, ${b.format(n.schema)}]}""",
          // anyOf: the stripped schema allows every null, for the validator to judge.
          s"""{"anyOf": [${a.format(n.stripped)}, ${b.format(n.stripped)}]}""", n.dt, nullable = true,
          r => if (r.nextInt(4) == 0) null else n.value(r))
      }
    }

    def node(depth: Int): Node = {
      val n = if (depth >= 3) scalar()
      else rnd.nextInt(10) match {
        case 0 | 1 => objectNode(depth + 1)
        case 2 => mapNode(depth + 1)
        case 3 => arrayNode(depth + 1)
        case 4 => rawNode(depth + 1)
        case 5 if defs.size < 3 => refNode(depth + 1)
        case _ => scalar()
      }
      if (chance(0.15)) orNull(n) else n
    }

    private def scalar(): Node = rnd.nextInt(5) match {
      case 0 | 1 => stringNode()
      case 2 => integerNode()
      case 3 => numberNode()
      case _ =>
        val rule = if (chance(0.3)) keywords(Seq(pick("const" -> "true", "enum" -> "[false]"))) else ""
        Node(s"""{"type": "boolean"$rule}""", """{"type": "boolean"}""", BooleanType, nullable = false,
          r => r.nextBoolean())
    }

    private val Patterns = Seq("^[a-z]+$", "^a", "b", "^\\\\d{3}$", "^[A-Z][a-z]*$", "@", "^$", "\\\\.com$", "😀")
    private val Strings = Seq("", "a", "abc", "b", "Abc", "123", "hello world", "😀𝄞", "x😀", "a@example.com",
      "192.168.0.1", "01.2.3.4", "::1", "1::2::3", "123e4567-e89b-12d3-a456-426614174000", "example.com",
      "-bad.com", "12:30:00Z", "25:00:00Z", "/a/b~0c", "a/b", "red", "green", "blue", "aaaaaa", "ab.com")

    private def stringNode(): Node = rnd.nextInt(8) match {
      case 0 => Node("""{"type": "string", "format": "date"}""", """{"type": "string", "format": "date"}""",
          DateType, nullable = false, r => r.nextInt(40000) - 10000)
      case 1 => Node("""{"type": "string", "format": "date-time"}""", """{"type": "string", "format": "date-time"}""",
          TimestampType, nullable = false, r => r.nextLong() % 4000000000000000L)
      case 2 =>
        val symbols = Seq("red", "green", "blue").take(1 + rnd.nextInt(3))
        val rule = if (symbols.size == 1 && chance(0.5)) s""""const": ${q(symbols.head)}"""
        else s""""enum": [${symbols.map(q).mkString(", ")}]"""
        Node(s"""{"type": "string", $rule}""", """{"type": "string"}""", StringType, nullable = false,
          r => UTF8String.fromString(if (r.nextInt(4) == 0) Strings(r.nextInt(Strings.size)) else pick(symbols: _*)))
      case _ =>
        val rules = Seq(
          if (chance(0.25)) Some("minLength" -> rnd.nextInt(4).toString) else None,
          if (chance(0.25)) Some("maxLength" -> (1 + rnd.nextInt(5)).toString) else None,
          if (chance(0.3)) Some("pattern" -> q(pick(Patterns: _*))) else None,
          if (chance(0.25)) Some("format" ->
            q(pick("email", "ipv4", "ipv6", "uuid", "hostname", "time", "json-pointer", "x-custom")))
          else None
        ).flatten
        Node(s"""{"type": "string"${keywords(rules)}}""", """{"type": "string"}""", StringType, nullable = false,
          r => UTF8String.fromString(Strings(r.nextInt(Strings.size))))
    }

    private val Longs = Seq(0L, 1L, -1L, 2L, 3L, 5L, 7L, 10L, 100L, -100L, 12L, Int.MaxValue.toLong,
      Int.MinValue.toLong, Long.MaxValue, Long.MinValue, 9007199254740993L, 9007199254740992L)
    private val Bounds = Seq("0", "1", "5", "10", "-3", "2.5", "9007199254740992")
    private val Multiples = Seq("2", "3", "0.5", "0.1", "0.01", "7")

    private def numericRules(): Seq[(String, String)] = Seq(
      if (chance(0.2)) Some("minimum" -> pick(Bounds: _*)) else None,
      if (chance(0.2)) Some("maximum" -> pick(Bounds: _*)) else None,
      if (chance(0.15)) Some("exclusiveMinimum" -> pick(Bounds: _*)) else None,
      if (chance(0.15)) Some("exclusiveMaximum" -> pick(Bounds: _*)) else None,
      if (chance(0.25)) Some("multipleOf" -> pick(Multiples: _*)) else None,
      if (chance(0.1)) Some("enum" -> "[1, 2.5, 7, 9007199254740992]") else None
    ).flatten

    private def integerNode(): Node =
      Node(s"""{"type": "integer"${keywords(numericRules())}}""", """{"type": "integer"}""", LongType,
        nullable = false, r => if (r.nextInt(5) == 0) r.nextLong() else Longs(r.nextInt(Longs.size)))

    private val Doubles = Seq(0.0, -0.0, 1.5, 0.1, 0.3, 0.2, 2.5, 10.0, -7.25, 1e-5, 1e300, Double.MaxValue,
      Double.MinPositiveValue, 9007199254740993.0, 7.0, 0.7, 1.1, 3.0, -3.0)

    private def numberNode(): Node =
      Node(s"""{"type": "number"${keywords(numericRules())}}""", """{"type": "number"}""", DoubleType,
        nullable = false, r => if (r.nextInt(5) == 0) r.nextDouble() * 20 - 10 else Doubles(r.nextInt(Doubles.size)))

    def objectNode(depth: Int): Node = {
      val count = 1 + rnd.nextInt(4)
      val props = (0 until count).map(i => (s"p$i${pick("", "_x", "é", "😀")}", node(depth)))
      val required = props.map(_._1).filter(_ => chance(0.5))
      val closed = chance(0.3)
      val sizes = Seq(
        if (chance(0.15)) Some("minProperties" -> (1 + rnd.nextInt(3)).toString) else None,
        if (chance(0.15)) Some("maxProperties" -> (1 + rnd.nextInt(3)).toString) else None).flatten
      def text(f: Node => String, rules: Seq[(String, String)]) = {
        val ps = props.map { case (k, n) => s"${q(k)}: ${f(n)}" }.mkString(", ")
        val req = if (required.isEmpty) "" else s""", "required": [${required.map(q).mkString(", ")}]"""
        val add = if (closed) """, "additionalProperties": false""" else ""
        s"""{"type": "object", "properties": {$ps}$req$add${keywords(rules)}}"""
      }
      val st = StructType(props.map { case (k, n) => StructField(k, n.dt, !required.contains(k) || n.nullable) })
      Node(text(_.schema, sizes), text(_.stripped, Nil), st, nullable = false,
        r =>
          new GenericInternalRow(props.map { case (k, n) =>
            if (!required.contains(k) && r.nextInt(5) == 0) null else n.value(r)
          }.toArray[Any]))
    }

    private def mapNode(depth: Int): Node = {
      val values = node(depth)
      val rules = Seq(
        if (chance(0.2)) Some("maxProperties" -> (1 + rnd.nextInt(2)).toString) else None,
        if (chance(0.2)) Some("propertyNames" -> """{"pattern": "^k"}""") else None).flatten
      val keys = Seq("k1", "k2", "other", "k😀", "")
      Node(s"""{"type": "object", "additionalProperties": ${values.schema}${keywords(rules)}}""",
        s"""{"type": "object", "additionalProperties": ${values.stripped}}""",
        MapType(StringType, values.dt, valueContainsNull = true), nullable = false,
        r => {
          val ks = keys.filter(_ => r.nextInt(3) == 0)
          new ArrayBasedMapData(new GenericArrayData(ks.map(UTF8String.fromString).toArray[Any]),
            new GenericArrayData(ks.map(_ => values.value(r)).toArray))
        })
    }

    private def arrayNode(depth: Int): Node = {
      val items = node(depth)
      val rules = Seq(
        if (chance(0.3)) Some("minItems" -> rnd.nextInt(3).toString) else None,
        if (chance(0.3)) Some("maxItems" -> (1 + rnd.nextInt(3)).toString) else None,
        if (chance(0.3)) Some("uniqueItems" -> "true") else None).flatten
      Node(s"""{"type": "array", "items": ${items.schema}${keywords(rules)}}""",
        s"""{"type": "array", "items": ${items.stripped}}""", ArrayType(items.dt, items.nullable), nullable = false,
        r => {
          val n = r.nextInt(4)
          val one = items.value(r)
          // Repeats now and then, for uniqueItems.
          new GenericArrayData((0 until n).map(i => if (i > 0 && r.nextInt(3) == 0) one else items.value(r)).toArray)
        })
    }

    private val RawValues = Seq("1", "2.5", "\"a\"", "\"abc\"", "true", "null", "[]", "[1,\"a\"]", "[1,2,3]",
      "{\"a\":1}", "{}", "-7", "\"😀\"", "[\"a\",1,true]", "{\"b\":\"x\"}")

    /** A value whose schema falls back to text: combinators, several types, tuples. */
    private def rawNode(depth: Int): Node = {
      def textual(make: () => Node): Node =
        Iterator.continually(make()).find(n => n.dt != DateType && n.dt != TimestampType).get
      val s = Seq(textual(() => stringNode()), integerNode(), textual(() => scalar()))
      val tuple = if (draft == Draft2020) s""""prefixItems": [${s.head.schema}, ${s(1).schema}]"""
      else s""""items": [${s.head.schema}, ${s(1).schema}], "additionalItems": ${pick("false", "true")}"""
      val schema = rnd.nextInt(7) match {
        case 0 => s"""{"oneOf": [${s.head.schema}, ${s(1).schema}]}"""
        case 1 => s"""{"anyOf": [${s.head.schema}, ${s(2).schema}]}"""
        case 2 => s"""{"allOf": [{"type": ["integer", "string"]}, {"not": {"const": 1}}]}"""
        case 3 => s"""{"type": "array", $tuple}"""
        case 4 => s"""{"type": ["string", "integer", "array"], "minLength": 2, "maxItems": 2}"""
        case 5 => s"""{"if": {"type": "integer"}, "then": {"minimum": 2}, "else": {"type": "string"}}"""
        case _ => """{"type": "array", "contains": {"type": "string"}}"""
      }
      val dt = if (schema.startsWith("{\"type\": \"array\"")) ArrayType(StringType, containsNull = true) else StringType
      val stripped = if (dt == StringType) "true" else """{"type": "array"}"""
      Node(schema, stripped, dt, nullable = dt == StringType,
        r => {
          def one(): Any = if (r.nextInt(8) == 0) null else UTF8String.fromString(RawValues(r.nextInt(RawValues.size)))
          if (dt == StringType) one()
          else new GenericArrayData((0 until r.nextInt(4)).map(_ => one()).toArray)
        })
    }

    private def refNode(depth: Int): Node = {
      val target = node(depth)
      val name = s"d${defs.size}"
      defs(name) = (target.schema, target.stripped)
      val ref = q(s"#/$defsKey/$name")
      Node(s"""{"$$ref": $ref}""", s"""{"$$ref": $ref}""", target.dt, target.nullable, target.value)
    }
  }
}
