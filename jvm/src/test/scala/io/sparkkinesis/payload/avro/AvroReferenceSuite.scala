package io.sparkkinesis.payload.avro

import java.io.ByteArrayOutputStream
import java.math.{BigDecimal => JBigDecimal, BigInteger}
import java.nio.ByteBuffer
import java.util.UUID
import java.util.zip.Deflater

import scala.collection.mutable
import scala.util.{Random, Try}

import io.sparkkinesis.compat.CollectionConverters._

import org.apache.avro.{JsonProperties, LogicalTypes, Schema, SchemaNormalization}
import org.apache.avro.Schema.Type._
import org.apache.avro.generic.{GenericData, GenericDatumReader, GenericFixed, GenericRecord}
import org.apache.avro.io.DecoderFactory
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.util.{ArrayBasedMapData, ArrayData, GenericArrayData, MapData}
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.payload.registry.GlueFraming

/**
 * The Avro conversions against Apache Avro's own GenericDatumWriter and GenericDatumReader, on generated schemas and
 * values (seeded; the seed is in every failure): what Avro writes, our decoder reads as Avro's reader does (its
 * generic objects mapped to Spark's values by the documented mapping, here); what our encoder writes, Avro's reader
 * reads back as the value given; writer and reader schemas of generated evolutions resolve as Avro resolves them;
 * schemas are given as producers write them (doc, aliases, extra properties, namespaces, references to named types)
 * and in Parsing Canonical Form.
 */
class AvroReferenceSuite extends AnyFunSuite {
  import AvroReferenceSuite._

  private val seed = sys.env.getOrElse("SPARK_KINESIS_TEST_SEED", "5101").toLong

  test(s"generated schemas and values: Avro's writer to our decoder, our encoder to Avro's reader, fields in " +
    s"another order and defaults left to the schema ($Schemas schemas)") {
    val rnd = new Random(seed)
    var cases, byteIdentical, canonicalWriters, defaults = 0
    (0 until Schemas).foreach { n =>
      val gen = new Gen(rnd)
      val schema = parse(if (rnd.nextBoolean()) pretty(gen.record(0).toString) else gen.record(0).toString)
      // Avro's canonical form cannot say that a type nested in a namespace has none ("namespace": ""): such a form
      // does not parse, with Avro's own parser too, and is left out.
      val canonical = Try(parse(SchemaNormalization.toParsingForm(schema))).toOption
      val dt = AvroTypes.sparkType(schema)
      val encoder = new AvroEncoder(dt, schema)
      // A struct with the record's fields in another order, less those with a default (Avro's own default written).
      val fields = schema.getFields.asScala.toIndexedSeq
      val kept = rnd.shuffle(fields.indices.filter(i => !fields(i).hasDefaultValue || rnd.nextBoolean()).toList)
      val partialType = StructType(kept.map(i => dt.asInstanceOf[StructType].fields(i)).toArray)
      val partial = new AvroEncoder(partialType, schema)
      // The writer as the producer wrote it, or in canonical form (no logical types, docs or aliases).
      val decoders = Seq(new AvroDecoder(schema, schema)) ++ canonical.map(c => new AvroDecoder(c, schema))
      if (canonical.isDefined) canonicalWriters += 1
      (0 until ValuesPerSchema).foreach { k =>
        val datum = gen.value(schema, rnd)
        val bytes = avroWrite(schema, datum)
        cases += 1
        def where = s"seed $seed, schema #$n value #$k: ${schema.toString}\n  value: $datum"
        val expected = toCatalyst(avroRead(schema, schema, bytes), schema)
        decoders.zipWithIndex.foreach { case (d, i) =>
          val ours = Try(d.decode(bytes, 0, bytes.length))
          assert(ours.isSuccess, s"$where\n  decoder $i: $ours")
          assert(norm(ours.get, dt) === norm(expected, dt), s"$where\n  decoder $i")
        }
        // Ours to Avro's reader: the same value back; the same bytes unless a union's branch is a matter of choice.
        val written = Try(encoder.encode(expected))
        assert(written.isSuccess, s"$where\n  encoder: $written")
        val back = toCatalyst(avroRead(schema, schema, written.get), schema)
        assert(norm(back, dt) === norm(expected, dt), s"$where\n  our bytes ${written.get.toSeq}")
        val row = expected.asInstanceOf[InternalRow]
        val fewer = new GenericInternalRow(kept.map(i => row.get(i, dt.asInstanceOf[StructType].fields(i).dataType))
            .toArray[Any])
        val defaulted = Try(partial.encode(fewer))
        if (kept.size < fields.size) defaults += 1
        assert(defaulted.isSuccess, s"$where\n  struct of ${partialType.simpleString}: $defaulted")
        val withDefaults = new GenericInternalRow(fields.indices.map { i =>
          if (kept.contains(i)) row.get(i, dt.asInstanceOf[StructType].fields(i).dataType)
          else toCatalyst(GenericData.get().getDefaultValue(fields(i)), fields(i).schema)
        }.toArray[Any])
        assert(norm(toCatalyst(avroRead(schema, schema, defaulted.get), schema), dt) === norm(withDefaults, dt),
          s"$where\n  struct of ${partialType.simpleString}")
        if (!gen.mayWriteOtherwise(schema)) {
          assert(written.get.toSeq === bytes.toSeq, s"$where\n  ours ${written.get.toSeq}\n  Avro's ${bytes.toSeq}")
          byteIdentical += 1
        }
      }
    }
    info(s"$cases values of $Schemas schemas (seed $seed), $canonicalWriters of them also written in canonical form; " +
      s"$byteIdentical values written byte for byte as Avro writes them; $defaults written with fields left to " +
      "their defaults")
  }

  test(s"generated schema evolutions, both ways: our decoder resolves as Avro's resolving reader does " +
    s"($Evolutions pairs)") {
    val rnd = new Random(seed + 1)
    var cases, failedAlike = 0
    (0 until Evolutions).foreach { n =>
      val gen = new Gen(rnd)
      val older = parse(gen.record(0).toString)
      val newer = parse(new Evolve(rnd).apply(older).toString)
      // Newer readers of older records, and older readers of newer records (then fields added are dropped, and
      // promotions run backwards, which Avro refuses).
      for ((writer, reader) <- Seq(older -> newer, newer -> older)) {
        def where = s"seed ${seed + 1}, pair #$n\n  writer: $writer\n  reader: $reader"
        val readerType = Try(AvroTypes.sparkType(reader))
        assert(readerType.isSuccess, s"$where: $readerType")
        val planned = Try(new AvroDecoder(writer, reader))
        (0 until ValuesPerSchema / 2).foreach { _ =>
          val datum = gen.value(writer, rnd)
          val bytes = avroWrite(writer, datum)
          cases += 1
          val expected = Try(toCatalyst(avroRead(writer, reader, bytes), reader))
          val ours = planned.flatMap(d => Try(d.decode(bytes, 0, bytes.length)))
          def detail = s"$where\n  value: $datum\n  ours: $ours\n  Avro's: $expected"
          assert(ours.isSuccess === expected.isSuccess, detail)
          if (ours.isSuccess) assert(norm(ours.get, readerType.get) === norm(expected.get, readerType.get), detail)
          else failedAlike += 1
        }
      }
    }
    info(s"$cases values of $Evolutions writer/reader pairs read both ways (seed ${seed + 1}); $failedAlike refused " +
      "by both")
  }

  test("records that contain themselves are refused by name, as the docs say, whatever the producer's syntax") {
    val texts = Seq(
      """{"type": "record", "name": "Node", "namespace": "t", "fields": [{"name": "v", "type": "int"},
        |{"name": "next", "type": ["null", "Node"], "default": null}]}""".stripMargin,
      """{"type": "record", "name": "Tree", "fields": [{"name": "kids", "type": {"type": "array", "items": "Tree"}}]}""",
      """{"type": "record", "name": "A", "fields": [{"name": "b", "type": {"type": "record", "name": "B",
        |"fields": [{"name": "a", "type": {"type": "map", "values": "A"}}]}}]}""".stripMargin)
    for (t <- texts) {
      val s = parse(t)
      assert(intercept[AvroConversionException](AvroTypes.sparkType(s)).getMessage.contains("contains itself"), t)
      assert(intercept[AvroConversionException](new AvroDecoder(s, s)).getMessage.contains("contains itself"), t)
    }
  }

  test("GSR frames as AWS's serde writes them: header version 3, no compression or zlib, read back by our codecs") {
    val rnd = new Random(seed + 2)
    var frames = 0
    (0 until 40).foreach { n =>
      val gen = new Gen(rnd)
      val schema = parse(gen.record(0).toString)
      val dt = AvroTypes.sparkType(schema)
      val id = new UUID(rnd.nextLong(), rnd.nextLong())
      (0 until 4).foreach { k =>
        val datum = gen.value(schema, rnd)
        val body = avroWrite(schema, datum)
        val compressed = k % 2 == 1
        // The frame as AWS's serializer lays it out: 3, the compression byte (0 or 5), the id's 16 bytes, the body.
        val header = ByteBuffer.allocate(18).put(3.toByte).put((if (compressed) 5 else 0).toByte)
          .putLong(id.getMostSignificantBits).putLong(id.getLeastSignificantBits).array()
        val frame = header ++ (if (compressed) zlib(body) else body)
        val read = GlueFraming.unframe(frame)
        frames += 1
        assert(read.schemaVersionId === id)
        val ours = new AvroDecoder(schema, schema).decode(read.bytes, read.offset, read.length)
        val expected = toCatalyst(avroRead(schema, schema, body), schema)
        assert(norm(ours, dt) === norm(expected, dt), s"seed ${seed + 2}, frame $n/$k of $schema")
        // Ours, framed by us, read by Avro after the frame is taken apart by hand.
        val mine = GlueFraming.frame(id, new AvroEncoder(dt, schema).encode(expected), compressed)
        assert(mine.take(18).toSeq === header.toSeq)
        val mineBody = if (compressed) inflate(mine.drop(18)) else mine.drop(18)
        assert(norm(toCatalyst(avroRead(schema, schema, mineBody), schema), dt) === norm(expected, dt))
      }
    }
    info(s"$frames frames")
  }
}

object AvroReferenceSuite {
  val Schemas = 300
  val ValuesPerSchema = 8
  val Evolutions = 300

  def parse(text: String): Schema = new Schema.Parser().parse(text)

  /** Schema JSON laid out on several lines, as a producer's file may be. */
  def pretty(text: String): String = {
    val mapper = new com.fasterxml.jackson.databind.ObjectMapper()
    mapper.writerWithDefaultPrettyPrinter().writeValueAsString(mapper.readTree(text))
  }

  def avroWrite(schema: Schema, datum: Any): Array[Byte] = AvroConversionSuite.avroBytes(schema, datum)

  def avroRead(writer: Schema, reader: Schema, bytes: Array[Byte]): Any = {
    val dec = DecoderFactory.get().binaryDecoder(bytes, null)
    val v = new GenericDatumReader[Any](writer, reader).read(null, dec)
    if (!dec.isEnd) throw new IllegalStateException(s"${bytes.length} bytes, not all read")
    v
  }

  private def zlib(b: Array[Byte]): Array[Byte] = {
    val d = new Deflater()
    d.setInput(b); d.finish()
    val out = new ByteArrayOutputStream()
    val buf = new Array[Byte](1024)
    while (!d.finished()) out.write(buf, 0, d.deflate(buf))
    out.toByteArray
  }

  private def inflate(b: Array[Byte]): Array[Byte] = {
    val i = new java.util.zip.Inflater()
    i.setInput(b)
    val out = new ByteArrayOutputStream()
    val buf = new Array[Byte](1024)
    while (!i.finished()) out.write(buf, 0, i.inflate(buf))
    out.toByteArray
  }

  /**
   * Values compared exactly: floats and doubles by their bits (NaN, -0.0), bytes and decimals by content; maps by
   * key, whatever their order (Avro's reader keeps a map's entries in a hash map).
   */
  def norm(v: Any, dt: DataType): Any = (v, dt) match {
    case (null, _) => null
    case (r: InternalRow, st: StructType) =>
      st.fields.indices.map(i => if (r.isNullAt(i)) null else norm(r.get(i, st(i).dataType), st(i).dataType)).toList
    case (a: ArrayData, ArrayType(et, _)) =>
      (0 until a.numElements()).map(i => if (a.isNullAt(i)) null else norm(a.get(i, et), et)).toList
    case (m: MapData, MapType(kt, vt, _)) =>
      norm(m.keyArray(), ArrayType(kt)).asInstanceOf[List[Any]].map(_.toString)
        .zip(norm(m.valueArray(), ArrayType(vt)).asInstanceOf[List[Any]]).sortBy(_._1)
    case (f: Float, _) => ("float", java.lang.Float.floatToRawIntBits(f))
    case (d: Double, _) => ("double", java.lang.Double.doubleToRawLongBits(d))
    case (b: Array[Byte], _) => b.toList
    case (d: Decimal, _) => d.toJavaBigDecimal
    case (s: UTF8String, _) => s.toString
    case _ => v
  }

  /** Avro's generic value of `schema` as Spark's value, by the mapping docs/schema-registry.md gives. */
  def toCatalyst(v: Any, schema: Schema): Any = if (v == null) null
  else {
    val logical = Option(schema.getLogicalType).map(_.getName).orNull
    (schema.getType, logical) match {
      case (LONG, "timestamp-millis" | "local-timestamp-millis") => Math.multiplyExact(v.asInstanceOf[Long], 1000L)
      case (BYTES, "decimal") | (FIXED, "decimal") =>
        val d = schema.getLogicalType.asInstanceOf[LogicalTypes.Decimal]
        val b = v match {
          case bb: ByteBuffer => val a = new Array[Byte](bb.remaining); bb.duplicate().get(a); a
          case f: GenericFixed => f.bytes
          case other => throw new IllegalArgumentException(s"no decimal in $other")
        }
        val value = new JBigDecimal(if (b.isEmpty) BigInteger.ZERO else new BigInteger(b), d.getScale)
        Decimal(value, d.getPrecision, d.getScale)
      case (NULL, _) => null
      case (BOOLEAN | INT | LONG | FLOAT | DOUBLE, _) => v
      case (STRING, _) | (ENUM, _) => UTF8String.fromString(v.toString)
      case (BYTES, _) =>
        val bb = v.asInstanceOf[ByteBuffer]; val a = new Array[Byte](bb.remaining); bb.duplicate().get(a); a
      case (FIXED, _) => v.asInstanceOf[GenericFixed].bytes.clone()
      case (RECORD, _) =>
        val r = v.asInstanceOf[GenericRecord]
        new GenericInternalRow(schema.getFields.asScala.map(f => toCatalyst(r.get(f.pos), f.schema)).toArray[Any])
      case (ARRAY, _) =>
        new GenericArrayData(v.asInstanceOf[java.util.Collection[Any]].asScala.map(toCatalyst(_, schema.getElementType))
            .toArray[Any])
      case (MAP, _) =>
        val m = v.asInstanceOf[java.util.Map[Any, Any]].asScala.toSeq
        new ArrayBasedMapData(new GenericArrayData(m.map(e => UTF8String.fromString(e._1.toString)).toArray[Any]),
          new GenericArrayData(m.map(e => toCatalyst(e._2, schema.getValueType)).toArray[Any]))
      case (UNION, _) =>
        val types = schema.getTypes.asScala.toIndexedSeq
        val branch = types(GenericData.get().resolveUnion(schema, v))
        val members = types.filter(_.getType != NULL)
        def plain(t: Schema) = t.getLogicalType == null
        if (members.size == 1) toCatalyst(v, branch)
        else if (members.forall(t => plain(t) && (t.getType == INT || t.getType == LONG)))
          v.asInstanceOf[Number].longValue
        else if (members.forall(t => plain(t) && (t.getType == FLOAT || t.getType == DOUBLE)))
          v.asInstanceOf[Number].doubleValue
        else {
          val values = new Array[Any](members.size)
          values(members.indexOf(branch)) = toCatalyst(v, branch)
          new GenericInternalRow(values)
        }
      case (other, _) => throw new IllegalArgumentException(s"no Spark value for $other")
    }
  }

  /** A schema generator for one document: names are unique within it, named types may be referred to again. */
  final class Gen(rnd: Random) {
    private var names = 0
    private val named = mutable.ArrayBuffer[Schema]()
    private def pick[T](xs: T*): T = xs(rnd.nextInt(xs.size))
    private def chance(p: Double) = rnd.nextDouble() < p
    private def newName(prefix: String) = { names += 1; s"$prefix$names" }
    private def namespace: String = pick(null, "com.example.orders", "io.x")

    /** Doc, aliases and extra properties, as producers write them. */
    private def decorate(s: Schema): Schema = {
      if (chance(0.3)) s.addProp("connect.name", "com.example." + s.getName)
      if (chance(0.2)) s.addAlias(s.getName + "Old")
      s
    }

    def record(depth: Int): Schema = {
      val r = Schema.createRecord(newName("R"), if (chance(0.3)) "a record" else null, namespace, false)
      named += r
      val fields = (0 until 1 + rnd.nextInt(if (depth == 0) 6 else 3)).map { i =>
        val t = schema(depth + 1)
        val f = new Schema.Field(s"f$i${pick("", "_é", "Name")}", t, if (chance(0.2)) "doc" else null,
          default(t).orNull)
        if (chance(0.15)) f.addAlias(s"old_f$i")
        if (chance(0.15)) f.addProp("x-origin", "generated")
        f
      }
      r.setFields(fields.asJava)
      decorate(r)
    }

    /** A default value for `t` as Avro's Field takes it, sometimes. */
    private def default(t: Schema): Option[AnyRef] = if (!chance(0.3)) None
    else t.getType match {
      case INT if t.getLogicalType == null => Some(Integer.valueOf(42))
      case STRING => Some("dflt")
      case UNION if t.getTypes.get(0).getType == NULL => Some(JsonProperties.NULL_VALUE)
      case _ => None
    }

    def schema(depth: Int): Schema = rnd.nextInt(if (depth > 3) 3 else 10) match {
      case 0 | 1 => primitive()
      case 2 => logical()
      case 3 => if (depth < 4) record(depth) else primitive()
      case 4 => Schema.createArray(schema(depth + 1))
      case 5 => Schema.createMap(schema(depth + 1))
      case 6 => union(depth)
      case 7 => enumOrFixed()
      case 8 if ready.nonEmpty => pick(ready: _*) // a reference to a named type defined before
      case _ => nullable(schema(depth + 1))
    }

    // A record whose fields are not set yet is still being generated: referring to it would make it recursive.
    private def ready: Seq[Schema] = named.filter(t => t.getType != RECORD || Try(t.getFields).isSuccess).toSeq

    private def nullable(t: Schema): Schema =
      if (t.getType == UNION) t
      else Schema.createUnion((if (chance(0.6)) Seq(Schema.create(NULL), t) else Seq(t, Schema.create(NULL))).asJava)

    private def primitive(): Schema = Schema.create(pick(BOOLEAN, INT, LONG, FLOAT, DOUBLE, STRING, BYTES))

    private def logical(): Schema = rnd.nextInt(11) match {
      case 0 => LogicalTypes.date().addToSchema(Schema.create(INT))
      case 1 => LogicalTypes.timeMillis().addToSchema(Schema.create(INT))
      case 2 => LogicalTypes.timeMicros().addToSchema(Schema.create(LONG))
      case 3 => LogicalTypes.timestampMillis().addToSchema(Schema.create(LONG))
      case 4 => LogicalTypes.timestampMicros().addToSchema(Schema.create(LONG))
      case 5 => LogicalTypes.localTimestampMillis().addToSchema(Schema.create(LONG))
      case 6 => LogicalTypes.localTimestampMicros().addToSchema(Schema.create(LONG))
      case 7 => LogicalTypes.uuid().addToSchema(Schema.create(STRING))
      case 8 =>
        val p = 1 + rnd.nextInt(38)
        LogicalTypes.decimal(p, rnd.nextInt(p + 1)).addToSchema(Schema.create(BYTES))
      case 9 =>
        val size = 1 + rnd.nextInt(16)
        val max = math.min(38, math.floor(math.log10(math.pow(2, 8 * size - 1) - 1)).toInt)
        val p = 1 + rnd.nextInt(math.max(1, max))
        val f = Schema.createFixed(newName("Dec"), null, namespace, size)
        named += f
        LogicalTypes.decimal(p, rnd.nextInt(p + 1)).addToSchema(f)
      case _ =>
        // duration (a fixed of 12, read as its bytes), written as a producer writes it.
        val f = Schema.createFixed(newName("Dur"), null, namespace, 12)
        f.addProp("logicalType", "duration")
        named += f
        f
    }

    private def enumOrFixed(): Schema =
      if (chance(0.5)) {
        val symbols = Seq("A", "B", "C_1", "D", "e").take(1 + rnd.nextInt(5))
        val e = Schema.createEnum(newName("E"), if (chance(0.3)) "an enum" else null, namespace, symbols.asJava,
          if (chance(0.3)) symbols.head else null)
        named += e
        decorate(e)
      } else {
        val f = Schema.createFixed(newName("F"), null, namespace, 1 + rnd.nextInt(8))
        named += f
        decorate(f)
      }

    /** A union of distinct kinds, with null or without, null first or not. */
    private def union(depth: Int): Schema = {
      val kinds = mutable.LinkedHashMap[String, Schema]()
      (0 until 2 + rnd.nextInt(3)).foreach { _ =>
        val t = rnd.nextInt(6) match {
          case 0 | 1 => primitive()
          case 2 => logical()
          case 3 => if (depth < 4) record(depth + 1) else primitive()
          case 4 => Schema.createArray(primitive())
          case _ => enumOrFixed()
        }
        val key = if (Set(RECORD, ENUM, FIXED).contains(t.getType)) t.getFullName else t.getType.getName
        if (!kinds.contains(key)) kinds(key) = t
      }
      val members = kinds.values.toSeq
      val withNull = if (chance(0.5)) members
      else {
        val at = rnd.nextInt(members.size + 1)
        (members.take(at) :+ Schema.create(NULL)) ++ members.drop(at)
      }
      Schema.createUnion(withNull.asJava)
    }

    /**
     * Whether our bytes may differ from Avro's for the same value: a union of int/long or float/double (our encoder
     * may choose the other branch), or a map (read back by Avro's reader into a hash map, in another order).
     */
    def mayWriteOtherwise(s: Schema): Boolean = {
      val seen = mutable.Set[String]()
      def walk(t: Schema): Boolean = t.getType match {
        case UNION =>
          val ms = t.getTypes.asScala.filter(_.getType != NULL)
          (ms.size > 1 && ms.forall(m => m.getLogicalType == null && Set(INT, LONG).contains(m.getType))) ||
          (ms.size > 1 && ms.forall(m => m.getLogicalType == null && Set(FLOAT, DOUBLE).contains(m.getType))) ||
          ms.exists(walk)
        case RECORD => seen.add(t.getFullName) && t.getFields.asScala.exists(f => walk(f.schema))
        case ARRAY => walk(t.getElementType)
        case MAP => true
        case _ => false
      }
      walk(s)
    }

    private val Ints = Seq(0, 1, -1, Int.MaxValue, Int.MinValue, 63, 64, -64, -65, 127, 128)
    private val Longs = Seq(0L, 1L, -1L, Long.MaxValue, Long.MinValue, Int.MaxValue + 1L, Int.MinValue - 1L)
    private val Floats = Seq(0f, -0f, Float.NaN, Float.PositiveInfinity, Float.NegativeInfinity, Float.MinPositiveValue,
      Float.MaxValue, 1.5f, -2.25f)
    private val Doubles = Seq(0d, -0d, Double.NaN, Double.PositiveInfinity, Double.NegativeInfinity,
      Double.MinPositiveValue, Double.MaxValue, 0.1, -1e300)
    private val Strings = Seq("", "a", "héllo", "😀𝄞 non-BMP", "\u0000nul", "日本語", "x" * 40)

    /** A generic value of `s`, as Avro's generic API holds it, with the edge cases each type has. */
    def value(s: Schema, r: Random): Any = {
      val logical = Option(s.getLogicalType).map(_.getName).orNull
      (s.getType, logical) match {
        case (NULL, _) => null
        case (BOOLEAN, _) => r.nextBoolean()
        case (INT, "date") => r.nextInt(80000) - 40000
        case (INT, "time-millis") => r.nextInt(86400000)
        case (LONG, "time-micros") => (r.nextLong() & Long.MaxValue) % 86400000000L
        case (LONG, "timestamp-millis" | "local-timestamp-millis") =>
          if (r.nextInt(6) == 0) pick(0L, -1L, 1L) else r.nextLong() % 9000000000000000L
        case (LONG, "timestamp-micros" | "local-timestamp-micros") =>
          if (r.nextInt(6) == 0) pick(Long.MaxValue, Long.MinValue, 0L) else r.nextLong()
        case (STRING, "uuid") => new UUID(r.nextLong(), r.nextLong()).toString
        case (INT, _) => if (r.nextBoolean()) Ints(r.nextInt(Ints.size)) else r.nextInt()
        case (LONG, _) => if (r.nextBoolean()) Longs(r.nextInt(Longs.size)) else r.nextLong()
        case (FLOAT, _) => if (r.nextBoolean()) Floats(r.nextInt(Floats.size)) else r.nextFloat() * 1000
        case (DOUBLE, _) => if (r.nextBoolean()) Doubles(r.nextInt(Doubles.size)) else r.nextGaussian() * 1e6
        case (STRING, _) => Strings(r.nextInt(Strings.size))
        case (BYTES, "decimal") => ByteBuffer.wrap(unscaled(s, r).toByteArray)
        case (FIXED, "decimal") =>
          val b = unscaled(s, r).toByteArray
          val size = s.getFixedSize
          val padded = Array.fill[Byte](size - b.length)(if (b(0) < 0) -1 else 0) ++ b
          new GenericData.Fixed(s, padded)
        case (BYTES, _) => ByteBuffer.wrap(Array.fill(r.nextInt(6))(r.nextInt(256).toByte))
        case (FIXED, _) => new GenericData.Fixed(s, Array.fill(s.getFixedSize)(r.nextInt(256).toByte))
        case (ENUM, _) => new GenericData.EnumSymbol(s, s.getEnumSymbols.get(r.nextInt(s.getEnumSymbols.size)))
        case (RECORD, _) =>
          val rec = new GenericData.Record(s)
          s.getFields.asScala.foreach(f => rec.put(f.pos, value(f.schema, r)))
          rec
        case (ARRAY, _) => (0 until r.nextInt(4)).map(_ => value(s.getElementType, r)).asJava
        case (MAP, _) =>
          val m = new java.util.LinkedHashMap[String, Any]()
          (0 until r.nextInt(4)).foreach(_ => m.put(Strings(r.nextInt(Strings.size)), value(s.getValueType, r)))
          m
        case (UNION, _) =>
          val types = s.getTypes.asScala
          val nonNull = types.filter(_.getType != NULL)
          if (types.size > nonNull.size && r.nextInt(3) == 0) null else value(nonNull(r.nextInt(nonNull.size)), r)
        case (other, _) => throw new IllegalArgumentException(s"$other")
      }
    }

    /** An unscaled decimal value with at most the schema's precision in digits: the extremes, 0, or any. */
    private def unscaled(s: Schema, r: Random): BigInteger = {
      val p = s.getLogicalType.asInstanceOf[LogicalTypes.Decimal].getPrecision
      val max = BigInteger.TEN.pow(p).subtract(BigInteger.ONE)
      r.nextInt(5) match {
        case 0 => max
        case 1 => max.negate()
        case 2 => BigInteger.ZERO
        case _ => new BigInteger(max.bitLength + 8, r.self).mod(max.add(BigInteger.ONE)).multiply(
            BigInteger.valueOf(if (r.nextBoolean()) 1 else -1))
      }
    }
  }

  /**
   * A reader schema evolved from a writer schema, as producers evolve them: fields removed, added with defaults,
   * renamed with aliases, records renamed with aliases, int to long to float to double, string and bytes either way,
   * enum symbols added, or removed with (or without) an enum default.
   */
  final class Evolve(rnd: Random) {
    private val done = mutable.Map[String, Schema]()
    private def chance(p: Double) = rnd.nextDouble() < p
    private var added = 0

    def apply(s: Schema): Schema = evolve(s, inUnion = false)

    private def evolve(s: Schema, inUnion: Boolean): Schema = (s.getType, s.getLogicalType) match {
      case (RECORD, _) =>
        done.getOrElse(s.getFullName, {
            val renamed = chance(0.2)
            val r = Schema.createRecord(if (renamed) s.getName + "V2" else s.getName, s.getDoc, s.getNamespace, false)
            if (renamed) r.addAlias(s.getFullName)
            done(s.getFullName) = r
            val kept = s.getFields.asScala.filter(_ => !chance(0.15)).map { f =>
              val name = if (chance(0.1)) f.name + "_renamed" else f.name
              val g = new Schema.Field(name, evolve(f.schema, inUnion = false), f.doc,
                if (f.hasDefaultValue) defaultOf(f) else null)
              if (name != f.name) g.addAlias(f.name)
              g
            }
            val extra = (0 until (if (chance(0.4)) 1 + rnd.nextInt(2) else 0)).map { _ =>
              added += 1
              rnd.nextInt(4) match {
                case 0 => new Schema.Field(s"added$added", Schema.create(INT), null, Integer.valueOf(7))
                case 1 => new Schema.Field(s"added$added",
                    Schema.createUnion(Schema.create(NULL), Schema.create(STRING)), null, JsonProperties.NULL_VALUE)
                case 2 => new Schema.Field(s"added$added", Schema.create(STRING), null, "d")
                case _ => new Schema.Field(s"added$added", Schema.createArray(Schema.create(LONG)), null,
                    new java.util.ArrayList[Any]())
              }
            }
            r.setFields((kept ++ extra).asJava)
            r
          })
      case (ENUM, _) =>
        done.getOrElse(s.getFullName, {
            val symbols = s.getEnumSymbols.asScala.toSeq
            val e = rnd.nextInt(4) match {
              case 0 => Schema.createEnum(s.getName, null, s.getNamespace, (symbols :+ "ADDED").asJava)
              case 1 if symbols.size > 1 => // a symbol the reader lacks, with a default for it
                Schema.createEnum(s.getName, null, s.getNamespace, symbols.init.asJava, symbols.head)
              case 2 if symbols.size > 1 => // a symbol the reader lacks, and no default: such values cannot be read
                Schema.createEnum(s.getName, null, s.getNamespace, symbols.init.asJava)
              case _ => s
            }
            done(s.getFullName) = e
            e
          })
      case (FIXED, _) => done.getOrElseUpdate(s.getFullName, s)
      case (ARRAY, _) => Schema.createArray(evolve(s.getElementType, inUnion = false))
      case (MAP, _) => Schema.createMap(evolve(s.getValueType, inUnion = false))
      case (UNION, _) => Schema.createUnion(s.getTypes.asScala.map(evolve(_, inUnion = true)).asJava)
      case (INT, null) if !inUnion && chance(0.4) => Schema.create(Seq(LONG, FLOAT, DOUBLE)(rnd.nextInt(3)))
      case (LONG, null) if !inUnion && chance(0.4) => Schema.create(Seq(FLOAT, DOUBLE)(rnd.nextInt(2)))
      case (FLOAT, null) if !inUnion && chance(0.4) => Schema.create(DOUBLE)
      case (STRING, null) if !inUnion && chance(0.4) => Schema.create(BYTES)
      case (BYTES, null) if !inUnion && chance(0.4) => Schema.create(STRING)
      case _ => s
    }

    private def defaultOf(f: Schema.Field): AnyRef = {
      val d = f.defaultVal()
      if (d == null) JsonProperties.NULL_VALUE else d
    }
  }
}
