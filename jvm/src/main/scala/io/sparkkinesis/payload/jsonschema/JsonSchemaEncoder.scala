package io.sparkkinesis.payload.jsonschema

import java.io.ByteArrayOutputStream
import java.nio.charset.StandardCharsets
import java.time.{Instant, LocalDate}
import java.time.format.DateTimeFormatter

import scala.util.control.NonFatal

import com.fasterxml.jackson.core.{JsonEncoding, JsonFactory, JsonGenerator, JsonParser}
import com.fasterxml.jackson.databind.{DeserializationFeature, JsonNode, ObjectMapper}
import com.fasterxml.jackson.databind.node.NullNode
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.util.{ArrayData, MapData}
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

import JsonSchemaTypes._

/**
 * Converts Catalyst values of `sparkType` to UTF-8 JSON text valid against the JSON Schema `definition`, the reverse
 * of [[JsonSchemaDecoder]]. A struct fills an object by field name, in the order of the schema's properties (a null
 * field is left out, or written as null when the property is required and may be null); a Spark field the
 * properties lack is written with the schema of `"additionalProperties"` (as plain JSON when there is none), or
 * refused when that is `false`. Dates are written `yyyy-MM-dd`, timestamps ISO-8601 in UTC with `Z`; a string where
 * the schema falls back to text must hold JSON text, written as it is (checked); a value of another type there is
 * written as plain JSON.
 *
 * The writing is planned once, here, which checks that the types fit: a [[JsonSchemaConversionException]] names the
 * first path that does not, and refuses the keywords it cannot enforce ([[JsonSchemaUnsupported]], naming them).
 * Per value it checks the schema's keywords, as AWS's serializer validates on write: most as it writes
 * ([[JsonSchemaRules]]), those that need the whole value (`oneOf`, `uniqueItems`, tuples, ...) on the value as
 * written, before it is copied out ([[JsonSchemaCheck]]). A value that breaks one throws, naming the path and the
 * rule.
 * Not thread-safe (one per task or thread): it reuses its buffer between calls.
 */
private[sparkkinesis] final class JsonSchemaEncoder(sparkType: DataType, definition: String) {
  private val factory = newFactory()
  private val write: JsonSchemaEncoder.Write = {
    val root = JsonSchemaEncoder.treeOf(definition)
    JsonSchemaCheck.audit(root, root, "#", scala.collection.mutable.Set("#"))
    JsonSchemaEncoder.writerOf(sparkType, shapeOf(definition), JsonSchemaEncoder.Plan(factory, root))
  }
  private val out = new ByteArrayOutputStream(256)

  /** The UTF-8 JSON text of `value`; a value the schema does not allow throws, and the next call starts afresh. */
  def encode(value: Any): Array[Byte] = {
    out.reset()
    val g = factory.createGenerator(out, JsonEncoding.UTF8)
    try write(g, value)
    catch {
      case e: Throwable =>
        // Closing what a failure left open must not hide the failure; the next call resets the buffer.
        try g.close()
        catch { case NonFatal(_) => }
        throw e
    }
    g.close()
    out.toByteArray
  }
}

private[sparkkinesis] object JsonSchemaEncoder {

  /** Writes one value (possibly null). */
  private type Write = (JsonGenerator, Any) => Unit

  /** An error whose message names the path. */
  private def fail(message: String) = new JsonSchemaConversionException(message)

  /** What every writer of one schema shares: the factory and the schema's root (for `$ref`s). */
  private final case class Plan(factory: JsonFactory, root: JsonNode) {
    def createParser(bytes: Array[Byte]): JsonParser = factory.createParser(bytes)
  }

  private val mapper = new ObjectMapper().enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)

  private def treeOf(definition: String): JsonNode =
    try mapper.readTree(definition)
    catch { case NonFatal(e) => throw new JsonSchemaConversionException(s"the JSON Schema is not valid JSON: $e", e) }

  /** Writes a value of `dt` (possibly null) as a value of `shape`; throws at once when the types do not fit. */
  private def writerOf(dt: DataType, shape: Shape, factory: Plan): Write = {
    val typed = valueWriter(dt, shape, factory)
    if (JsonSchemaCheck.needsWholeValue(shape.node) ||
      (shape.kind == RawKind && JsonSchemaCheck.constrains(shape.node))) wholeValueChecked(typed, shape, factory)
    else {
      val rules = new JsonSchemaRules(shape)
      val checkNull: () => Unit = if (shape.nullByPair) pairNull(shape, factory) else () => rules.nullValue()
      (g, v) =>
        if (v != null) typed(g, v)
        else if (shape.nullable) { checkNull(); g.writeNull() }
        else throw fail(s"null at ${shape.path}, where the schema allows no null")
    }
  }

  /**
   * `w`'s value (or null) checked against the whole schema node, for what the typed writers do not check alone
   * (`oneOf`, `uniqueItems`, tuples, ...): written aside, read back as a tree, checked, then copied out.
   */
  private def wholeValueChecked(w: Write, shape: Shape, plan: Plan): Write = {
    val aside = new ByteArrayOutputStream(128)
    val checkPairNull = if (shape.nullByPair) pairNull(shape, plan) else () => ()
    (g, v) => {
      if (v == null && !shape.nullable) throw fail(s"null at ${shape.path}, where the schema allows no null")
      if (v == null && shape.nullByPair) { checkPairNull(); g.writeNull() }
      else {
        aside.reset()
        val side = plan.factory.createGenerator(aside, JsonEncoding.UTF8)
        if (v == null) side.writeNull() else w(side, v)
        side.close()
        val text = aside.toByteArray
        val tree = mapper.readTree(text)
        // A JSON null (text "null" where the schema falls back to text) is the null branch's, when there is one.
        val problem =
          if (tree.isNull && shape.nullByPair) { checkPairNull(); null }
          else JsonSchemaCheck.check(tree, shape.node, plan.root, shape.path)
        if (problem != null) throw fail(problem)
        g.writeRawValue(new String(text, StandardCharsets.UTF_8))
      }
    }
  }

  /**
   * The check of a null where `shape` is one branch of a pair with `{"type": "null"}`, decided once: always valid
   * under `anyOf`; under `oneOf` only when the other branch does not allow null as well (then null fits two
   * branches, not one).
   */
  private def pairNull(shape: Shape, plan: Plan): () => Unit = {
    val both = shape.pair == "oneOf" &&
      JsonSchemaCheck.check(NullNode.getInstance, shape.pairBranch, plan.root, shape.path) == null
    val oneOf = shape.path.substring(0, shape.path.lastIndexOf('/'))
    if (!both) () => ()
    else () => throw fail(s"null at $oneOf fits both schemas of the oneOf, not exactly one")
  }

  /** Writes a value that is not null. */
  private def valueWriter(dt: DataType, shape: Shape, factory: Plan): Write = {
    val rules = new JsonSchemaRules(shape)
    (shape.kind, dt) match {
      case (StringKind | DateKind | TimestampKind, StringType) =>
        (g, v) => { val s = v.asInstanceOf[UTF8String]; rules.string(s); g.writeString(s.toString) }
      case (DateKind, DateType) => (g, v) => { val s = date(v); rules.formatted(s); g.writeString(s) }
      case (TimestampKind, TimestampType) => (g, v) => { val s = timestamp(v); rules.formatted(s); g.writeString(s) }
      case (IntegerKind | NumberKind, ByteType | ShortType | IntegerType | LongType) =>
        val toLong = longOf(dt)
        (g, v) => { val l = toLong(v); rules.number(l.toDouble, l); g.writeNumber(l) }
      case (NumberKind, FloatType | DoubleType) =>
        (g, v) => {
          val d = if (dt == FloatType) v.asInstanceOf[Float].toDouble else v.asInstanceOf[Double]
          if (d.isNaN || d.isInfinite) throw fail(s"$d at ${shape.path} is not a JSON number")
          rules.number(d, d); g.writeNumber(d)
        }
      case (NumberKind, _: DecimalType) =>
        (g, v) => { val d = v.asInstanceOf[Decimal]; rules.number(d.toDouble, d); g.writeNumber(d.toJavaBigDecimal) }
      case (BooleanKind, BooleanType) =>
        (g, v) => { val b = v.asInstanceOf[Boolean]; rules.boolean(b); g.writeBoolean(b) }
      case (NullKind, _) => (_, _) => throw fail(s"a value at ${shape.path}, where the schema allows only null")
      case (RawKind, StringType) =>
        (g, v) => {
          val p = factory.createParser(v.asInstanceOf[UTF8String].getBytes)
          try {
            if (p.nextToken() == null) throw fail(s"the string at ${shape.path} holds no JSON text")
            JsonSchemaDecoder.copy(p, g)
            if (p.nextToken() != null) throw fail(s"the string at ${shape.path} holds more than one JSON value")
          } catch {
            case e: JsonSchemaConversionException => throw e
            case e: java.io.IOException =>
              throw new JsonSchemaConversionException(s"the string at ${shape.path} is not JSON text: $e", e)
          } finally p.close()
        }
      case (RawKind, _) => plain(dt, shape.path)
      case (kind: ObjectKind, st: StructType) => objectWriter(st, kind, shape, factory)
      case (MapKind(values), MapType(StringType, vt, _)) =>
        val get = InternalRow.getAccessor(vt, nullable = true)
        val w = writerOf(vt, values, factory)
        (g, v) => {
          val m = v.asInstanceOf[MapData]
          val (keys, vals) = (m.keyArray(), m.valueArray())
          g.writeStartObject()
          var i = 0
          while (i < m.numElements()) { g.writeFieldName(keys.getUTF8String(i).toString); w(g, get(vals, i)); i += 1 }
          g.writeEndObject()
        }
      case (ArrayKind(items), ArrayType(et, _)) =>
        val w = arrayWriter(et, writerOf(et, items, factory))
        (g, v) => { rules.items(v.asInstanceOf[ArrayData].numElements()); w(g, v) }
      case _ => throw fail(s"cannot write Spark ${dt.simpleString} at ${shape.path} as ${describe(shape.kind)}")
    }
  }

  /** An array of elements of `et`, each written by `w`. */
  private def arrayWriter(et: DataType, w: Write): Write = {
    val get = InternalRow.getAccessor(et, nullable = true)
    (g, v) => {
      val a = v.asInstanceOf[ArrayData]
      g.writeStartArray()
      var i = 0
      while (i < a.numElements()) { w(g, get(a, i)); i += 1 }
      g.writeEndArray()
    }
  }

  /** Days since the epoch as `yyyy-MM-dd`. */
  private def date(v: Any): String = LocalDate.ofEpochDay(v.asInstanceOf[Int].toLong).toString

  /** Microseconds since the epoch as ISO-8601 in UTC (`2024-01-02T03:04:05.006Z`). */
  private def timestamp(v: Any): String = {
    val micros = v.asInstanceOf[Long]
    DateTimeFormatter.ISO_INSTANT.format(
      Instant.ofEpochSecond(Math.floorDiv(micros, 1000000L), Math.floorMod(micros, 1000000L) * 1000L))
  }

  /** Reads a value of a Spark integral type as a long. */
  private def longOf(dt: DataType): Any => Long = dt match {
    case ByteType => _.asInstanceOf[Byte].toLong
    case ShortType => _.asInstanceOf[Short].toLong
    case IntegerType => _.asInstanceOf[Int].toLong
    case _ => _.asInstanceOf[Long]
  }

  /** One field of a struct, written as the property `name`. */
  private final class Field(
      val name: String,
      val ordinal: Int,
      dt: DataType,
      val write: Write,
      val required: Boolean,
      val nullable: Boolean) {
    val get: (InternalRow, Int) => Any = InternalRow.getAccessor(dt, nullable = true)
  }

  /** The struct's fields as the object's properties, in the schema's order, then the fields the schema lacks. */
  private def objectWriter(st: StructType, kind: ObjectKind, shape: Shape, factory: Plan): Write = {
    val names = kind.properties.map(_.name).toSet
    val extra = st.fields.filterNot(f => names.contains(f.name))
    if (kind.closed && extra.nonEmpty)
      throw fail(s"the Spark field '${extra.head.name}' is not a property of the object at ${shape.path}, which " +
        s"allows no other (additionalProperties is false; properties: ${kind.properties.map(_.name).mkString(", ")})")
    kind.properties.find(p => p.required && !st.fieldNames.contains(p.name)).foreach { p =>
      throw fail(s"the required property '${p.name}' of the object at ${shape.path} has no Spark field")
    }
    val known = kind.properties.filter(p => st.fieldNames.contains(p.name)).map { p =>
      val i = st.fieldIndex(p.name)
      new Field(p.name, i, st(i).dataType, writerOf(st(i).dataType, p.shape, factory), p.required,
        p.shape.nullable)
    }
    val others = extra.map { f =>
      val w = kind.extra match {
        case Some(schema) => writerOf(f.dataType, schema, factory)
        case None => plainOrNull(f.dataType, s"${shape.path}/properties/${f.name}")
      }
      new Field(f.name, st.fieldIndex(f.name), f.dataType, w, required = false, nullable = true)
    }
    val fields = (known ++ others).toArray
    (g, v) => {
      val row = v.asInstanceOf[InternalRow]
      g.writeStartObject()
      var i = 0
      while (i < fields.length) {
        val f = fields(i)
        val value = f.get(row, f.ordinal)
        if (value != null || f.required) {
          if (value == null && !f.nullable)
            throw fail(s"the required property '${f.name}' at ${shape.path} is null, where the schema allows no null")
          g.writeFieldName(f.name)
          f.write(g, value)
        }
        i += 1
      }
      g.writeEndObject()
    }
  }

  /** [[plain]], null as JSON null. */
  private def plainOrNull(dt: DataType, path: String): Write = {
    val w = plain(dt, path)
    (g, v) => if (v == null) g.writeNull() else w(g, v)
  }

  /** Writes a value that is not null as plain JSON, where the schema says nothing of its type. */
  private def plain(dt: DataType, path: String): Write = dt match {
    case StringType => (g, v) => g.writeString(v.toString)
    case BooleanType => (g, v) => g.writeBoolean(v.asInstanceOf[Boolean])
    case ByteType | ShortType | IntegerType | LongType => val toLong = longOf(dt); (g, v) => g.writeNumber(toLong(v))
    case FloatType | DoubleType =>
      (g, v) => {
        val d = if (dt == FloatType) v.asInstanceOf[Float].toDouble else v.asInstanceOf[Double]
        if (d.isNaN || d.isInfinite) throw fail(s"$d at $path is not a JSON number")
        g.writeNumber(d)
      }
    case _: DecimalType => (g, v) => g.writeNumber(v.asInstanceOf[Decimal].toJavaBigDecimal)
    case DateType => (g, v) => g.writeString(date(v))
    case TimestampType => (g, v) => g.writeString(timestamp(v))
    case st: StructType =>
      val fields = st.fields.indices.map(i =>
        (st(i).name, InternalRow.getAccessor(st(i).dataType, nullable = true),
          plainOrNull(st(i).dataType, s"$path/properties/${st(i).name}"))).toArray
      (g, v) => {
        val row = v.asInstanceOf[InternalRow]
        g.writeStartObject()
        var i = 0
        while (i < fields.length) { g.writeFieldName(fields(i)._1); fields(i)._3(g, fields(i)._2(row, i)); i += 1 }
        g.writeEndObject()
      }
    case ArrayType(et, _) => arrayWriter(et, plainOrNull(et, s"$path/items"))
    case MapType(StringType, vt, _) =>
      val (get, w) = (InternalRow.getAccessor(vt, nullable = true), plainOrNull(vt, s"$path/additionalProperties"))
      (g, v) => {
        val m = v.asInstanceOf[MapData]
        g.writeStartObject()
        var i = 0
        while (i < m.numElements()) {
          g.writeFieldName(m.keyArray().getUTF8String(i).toString); w(g, get(m.valueArray(), i)); i += 1
        }
        g.writeEndObject()
      }
    case _ => throw fail(s"cannot write Spark ${dt.simpleString} at $path as JSON")
  }
}
