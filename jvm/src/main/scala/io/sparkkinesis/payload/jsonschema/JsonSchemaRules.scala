package io.sparkkinesis.payload.jsonschema

import java.math.{BigDecimal => JBigDecimal}

import com.fasterxml.jackson.databind.JsonNode
import org.apache.spark.unsafe.types.UTF8String

import JsonSchemaTypes._

/**
 * The rules of a schema node that [[JsonSchemaEncoder]] checks per value as it writes it: `enum` and `const` (of
 * strings, numbers and booleans), `minLength`/`maxLength` (in characters, code points), `pattern` (searched, not
 * anchored, with `java.util.regex`), `format` (those of [[JsonSchemaCheck.Formats]]), `minimum`/`maximum`,
 * `exclusiveMinimum`/`exclusiveMaximum` in both forms (draft-04's flags, later drafts' bounds), `multipleOf`
 * (exactly, in decimal), `minItems`/`maxItems`. The other keywords are checked on the whole value
 * ([[JsonSchemaCheck]]) or refused when the encoder is planned. A value that breaks one throws
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
  private val exactNumbers: Seq[JBigDecimal] = allowed.filter(_.isNumber).map(_.decimalValue)
  private val rule = if (get("const") != null) "const" else "enum"
  private def list = allowed.map(_.toString).mkString(", ")
  private val booleans: Set[Boolean] = allowed.filter(_.isBoolean).map(_.booleanValue).toSet
  private val (minLength, maxLength) = (count("minLength"), count("maxLength"))
  private val (minItems, maxItems) = (count("minItems"), count("maxItems"))
  private val pattern = Option(get("pattern")).filter(_.isTextual)
    .map(p => (p.textValue, JsonSchemaCheck.compilePattern(p.textValue, s"${shape.path}/pattern")))
  private val format = Option(get("format")).filter(_.isTextual)
    .flatMap(f => JsonSchemaCheck.Formats.checker(f.textValue).map(c => (f.textValue, c)))
  private val multiple: JBigDecimal = Option(get("multipleOf")).filter(_.isNumber).map(_.decimalValue).orNull
  private val exactBounds: Array[JBigDecimal] = Seq("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
    .flatMap(k => Option(get(k)).filter(_.isNumber).map(_.decimalValue)).toArray

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
    if (pattern.isDefined || format.isDefined) {
      val text = s.toString
      pattern.foreach { case (p, regex) => if (!regex.matcher(text).find()) throw broken(s"'$s'", s"pattern $p") }
      format.foreach { case (f, ok) => if (!ok(text)) throw broken(s"'$s'", s"format $f") }
    }
  }

  /** Checks a string written as a date or a timestamp (always of its format): enum, const and the lengths. */
  def formatted(s: String): Unit = if (allowed.nonEmpty || minLength >= 0 || maxLength >= 0 || pattern.isDefined)
    string(UTF8String.fromString(s))

  /** Checks a null against enum and const. */
  def nullValue(): Unit =
    if (allowed.nonEmpty && !allowed.exists(_.isNull)) throw broken("null", s"$rule [$list]")

  /** Checks a boolean against enum and const. */
  def boolean(b: Boolean): Unit =
    if (allowed.nonEmpty && !booleans.contains(b)) throw broken(b, s"$rule [$list]")

  /** Checks an array's size against minItems and maxItems. */
  def items(n: Int): Unit = {
    if (minItems >= 0 && n < minItems) throw broken(s"of $n items", s"minItems $minItems")
    if (maxItems >= 0 && n > maxItems) throw broken(s"of $n items", s"maxItems $maxItems")
  }

  /**
   * Checks a number against enum, const, the bounds and multipleOf: `d`, the value as a double; `value`, as written
   * (a Long, a Double, a Decimal), for exact comparisons and messages.
   */
  def number(d: Double, value: Any): Unit = {
    // The doubles find the candidates; the decimals decide (9007199254740993 is not 9007199254740992).
    if (allowed.nonEmpty && !(numbers.contains(d) && exactNumbers.exists(_.compareTo(exact(value)) == 0)))
      throw broken(value, s"$rule [$list]")
    var i = 0
    while (i < bounds.length) {
      val (name, b, above, equal) = bounds(i)
      // Doubles decide unless they are equal or too large to hold every long: then the decimal values do.
      val c =
        if (d != b && Math.abs(d) < TwoTo53 && Math.abs(b) < TwoTo53) java.lang.Double.compare(d, b)
        else exact(value).compareTo(exactBounds(i))
      val ok = if (above) c > 0 || (equal && c == 0) else c < 0 || (equal && c == 0)
      if (!ok) throw broken(value, name)
      i += 1
    }
    if (multiple != null && !JsonSchemaCheck.multipleOf(exact(value), multiple))
      throw broken(value, s"multipleOf $multiple")
  }

  /** The value as the decimal it is written as (a double as `Double.toString` writes it, as Jackson does). */
  private def exact(value: Any): JBigDecimal = value match {
    case l: Long => JBigDecimal.valueOf(l)
    case d: Double => JBigDecimal.valueOf(d)
    case d: org.apache.spark.sql.types.Decimal => d.toJavaBigDecimal
    case other => new JBigDecimal(other.toString)
  }

  private final val TwoTo53 = 9007199254740992.0
}
