package io.sparkkinesis.payload.jsonschema

import com.fasterxml.jackson.databind.JsonNode
import org.apache.spark.unsafe.types.UTF8String

import JsonSchemaTypes._

/**
 * The cheap rules of a schema node that [[JsonSchemaEncoder]] checks per value: `enum` and `const` (of strings and
 * numbers), `minLength`/`maxLength` (in characters, code points), `minimum`/`maximum`, and `exclusiveMinimum`/
 * `exclusiveMaximum` in both forms (draft-04's flags, later drafts' bounds). A value that breaks one throws
 * [[JsonSchemaConversionException]] naming the path and the rule.
 */
private[jsonschema] final class JsonSchemaRules(shape: Shape) {
  private val node: JsonNode = if (shape.node != null && shape.node.isObject) shape.node else null
  private def get(name: String): JsonNode = if (node == null) null else node.get(name)
  private def count(name: String): Int = { val n = get(name); if (n != null && n.canConvertToInt) n.intValue else -1 }
  private def bound(name: String): Option[Double] = Option(get(name)).filter(_.isNumber).map(_.doubleValue)
  private def flag(name: String): Boolean = { val n = get(name); n != null && n.isBoolean && n.booleanValue }

  // enum and const: the allowed values, as strings and as numbers.
  private val allowed: Seq[JsonNode] = Option(get("enum")).filter(_.isArray).map(e => (0 until e.size).map(e.get))
    .getOrElse(Nil) ++ Option(get("const")).toSeq
  private val strings: Set[UTF8String] = allowed.filter(_.isTextual).map(n => UTF8String.fromString(n.textValue)).toSet
  private val numbers: Set[Double] = allowed.filter(_.isNumber).map(_.doubleValue).toSet
  private val rule = if (get("const") != null) "const" else "enum"
  private def list = allowed.map(_.toString).mkString(", ")
  private val (minLength, maxLength) = (count("minLength"), count("maxLength"))

  // (the rule as written, the bound, whether the value must be above it (or below), whether it may equal it);
  // draft-04's exclusiveMinimum is a flag on minimum, later drafts' a bound of its own.
  private val bounds: Array[(String, Double, Boolean, Boolean)] = Seq(
    bound("minimum").map(m =>
      (s"minimum ${get("minimum")}" + (if (flag("exclusiveMinimum")) " (exclusive)" else ""),
        m, true, !flag("exclusiveMinimum"))),
    bound("maximum").map(m =>
      (s"maximum ${get("maximum")}" + (if (flag("exclusiveMaximum")) " (exclusive)" else ""),
        m, false, !flag("exclusiveMaximum"))),
    bound("exclusiveMinimum").map(m => (s"exclusiveMinimum ${get("exclusiveMinimum")}", m, true, false)),
    bound("exclusiveMaximum").map(m => (s"exclusiveMaximum ${get("exclusiveMaximum")}", m, false, false))
  ).flatten.toArray

  /** A value that breaks `rule`. */
  private def broken(value: Any, rule: String) = new JsonSchemaConversionException(
    s"the value ${clip(String.valueOf(value))} at ${shape.path} breaks the schema's rule $rule")

  /** Checks a string against enum, const, minLength and maxLength. */
  def string(s: UTF8String): Unit = {
    if (allowed.nonEmpty && !strings.contains(s)) throw broken(s"'$s'", s"$rule [$list]")
    if (minLength >= 0 || maxLength >= 0) {
      val n = s.numChars()
      if (minLength >= 0 && n < minLength) throw broken(s"'$s'", s"minLength $minLength (it has $n characters)")
      if (maxLength >= 0 && n > maxLength) throw broken(s"'$s'", s"maxLength $maxLength (it has $n characters)")
    }
  }

  /** Checks a number against enum, const and the bounds: `d`, the value as a double; `value`, as in messages. */
  def number(d: Double, value: Any): Unit = {
    if (allowed.nonEmpty && !numbers.contains(d)) throw broken(value, s"$rule [$list]")
    var i = 0
    while (i < bounds.length) {
      val (name, b, above, equal) = bounds(i)
      val ok = if (above) d > b || (equal && d == b) else d < b || (equal && d == b)
      if (!ok) throw broken(value, name)
      i += 1
    }
  }
}
