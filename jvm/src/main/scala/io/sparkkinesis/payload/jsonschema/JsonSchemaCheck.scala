package io.sparkkinesis.payload.jsonschema

import java.math.{BigDecimal => JBigDecimal}
import java.time.LocalDate
import java.util.regex.{Pattern, PatternSyntaxException}

import scala.util.Try

import io.sparkkinesis.compat.CollectionConverters._

import com.fasterxml.jackson.core.JsonPointer
import com.fasterxml.jackson.databind.JsonNode

import JsonSchemaTypes.clip

/**
 * What [[JsonSchemaEncoder]] checks beyond the Spark types: the JSON Schema keywords it enforces, the `format`s it
 * knows, `pattern`s, and a check of a whole JSON value against a schema node for the places where the typed writers
 * do not check every keyword themselves (`oneOf`, `uniqueItems`, tuples, ...). The keywords it cannot enforce are
 * refused by name when the encoder is planned ([[JsonSchemaUnsupported]]), never skipped.
 *
 * Supported (drafts 4 to 2020-12): `type`, `enum`, `const`, `multipleOf`, `minimum`, `maximum`,
 * `exclusiveMinimum`, `exclusiveMaximum` (both forms), `minLength`, `maxLength`, `pattern`, `format` (the formats of
 * [[Formats]]), `items` (a schema, or a tuple before 2020-12), `prefixItems`, `additionalItems`, `minItems`,
 * `maxItems`, `uniqueItems`, `contains`, `minContains`, `maxContains`, `properties`, `required`,
 * `additionalProperties`, `patternProperties`, `propertyNames`, `minProperties`, `maxProperties`,
 * `dependentRequired`, `dependentSchemas`, `dependencies`, `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else` and
 * `$ref` within the document. Refused: [[Refused]].
 */
private[jsonschema] object JsonSchemaCheck {

  /** Keywords that assert or apply and that the encoder cannot enforce: a schema holding one is refused on write. */
  val Refused: Map[String, String] = Map(
    "unevaluatedProperties" -> ("List the allowed properties under properties or patternProperties, with " +
      "additionalProperties"),
    "unevaluatedItems" -> "Describe the items with items or prefixItems",
    "$dynamicRef" -> "Use a $ref within the document",
    "$recursiveRef" -> "Use a $ref within the document")

  /** The keywords that make a node's values need the whole-value check, beyond what the typed writers check. */
  val NeedWholeValue: Set[String] = Set("uniqueItems", "contains", "minContains", "maxContains", "prefixItems",
    "additionalItems", "patternProperties", "propertyNames", "minProperties", "maxProperties", "dependentRequired",
    "dependentSchemas", "dependencies", "allOf", "anyOf", "oneOf", "not", "if", "then", "else")

  /** The formats checked; every other format of the specification is refused by name on write. */
  object Formats {
    private val DatePattern = Pattern.compile("(\\d{4})-(\\d{2})-(\\d{2})")
    private val TimePattern =
      Pattern.compile("(\\d{2}):(\\d{2}):(\\d{2})(\\.\\d+)?([Zz]|([+-])(\\d{2}):(\\d{2}))")
    private val Uuid = Pattern.compile("[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
    private val Label = Pattern.compile("[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?")
    private val Atom = Pattern.compile("[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+")
    private val JsonPointerText = Pattern.compile("(/([^~/]|~[01])*)*")

    /** The checker of the format `name`, or None when the encoder does not check it. */
    def checker(name: String): Option[String => Boolean] = name match {
      case "date" => Some(date)
      case "time" => Some(time)
      case "date-time" => Some(dateTime)
      case "uuid" => Some(s => Uuid.matcher(s).matches())
      case "ipv4" => Some(ipv4)
      case "ipv6" => Some(ipv6)
      case "hostname" => Some(hostname)
      case "email" => Some(email)
      case "json-pointer" => Some(s => JsonPointerText.matcher(s).matches())
      case "regex" => Some(s => Try(Pattern.compile(s)).isSuccess)
      case _ => None
    }

    /** The formats the specification defines that the encoder does not check: refused by name. */
    val Unchecked: Set[String] = Set("uri", "uri-reference", "iri", "iri-reference", "uri-template", "idn-email",
      "idn-hostname", "relative-json-pointer", "duration")

    def date(s: String): Boolean = {
      val m = DatePattern.matcher(s)
      m.matches() && Try(LocalDate.of(m.group(1).toInt, m.group(2).toInt, m.group(3).toInt)).isSuccess
    }

    def time(s: String): Boolean = {
      val m = TimePattern.matcher(s)
      m.matches() && m.group(1).toInt <= 23 && m.group(2).toInt <= 59 && m.group(3).toInt <= 59 &&
      (m.group(6) == null || (m.group(7).toInt <= 23 && m.group(8).toInt <= 59))
    }

    def dateTime(s: String): Boolean = {
      val t = s.indexWhere(c => c == 'T' || c == 't')
      t == 10 && date(s.substring(0, t)) && time(s.substring(t + 1))
    }

    def ipv4(s: String): Boolean = {
      val parts = s.split("\\.", -1)
      parts.length == 4 && parts.forall(p =>
        p.nonEmpty && p.length <= 3 && p.forall(c => c >= '0' && c <= '9') && (p.length == 1 || p(0) != '0') &&
          p.toInt <= 255)
    }

    def ipv6(s: String): Boolean = {
      def hex(g: String) = g.nonEmpty && g.length <= 4 && g.forall(c => Character.digit(c, 16) >= 0 && c < 128)
      // The groups of one side of "::"; the last of the address may be an IPv4 address (two groups' worth).
      def groups(side: String, last: Boolean): Option[Int] =
        if (side.isEmpty) Some(0)
        else {
          val gs = side.split(":", -1).toSeq
          if (last && gs.last.contains('.'))
            if (ipv4(gs.last) && gs.init.forall(hex)) Some(gs.size + 1) else None
          else if (gs.forall(hex)) Some(gs.size)
          else None
        }
      val halves = s.split("::", -1)
      halves.length match {
        case 1 => groups(s, last = true).contains(8)
        case 2 =>
          (groups(halves(0), last = false), groups(halves(1), last = true)) match {
            case (Some(a), Some(b)) => a + b <= 7
            case _ => false
          }
        case _ => false
      }
    }

    def hostname(s: String): Boolean = {
      val name = if (s.endsWith(".")) s.dropRight(1) else s
      name.nonEmpty && name.length <= 253 && name.split("\\.", -1).forall(l => Label.matcher(l).matches())
    }

    /** A dot-atom local part at a host name or an address literal (`[192.0.2.1]`, `[IPv6:...]`). */
    def email(s: String): Boolean = {
      val at = s.lastIndexOf('@')
      if (at <= 0 || at == s.length - 1) false
      else {
        val (local, domain) = (s.substring(0, at), s.substring(at + 1))
        val localOk = local.length <= 64 && local.split("\\.", -1).forall(a => Atom.matcher(a).matches())
        val domainOk =
          if (domain.startsWith("[") && domain.endsWith("]")) {
            val literal = domain.substring(1, domain.length - 1)
            if (literal.regionMatches(true, 0, "IPv6:", 0, 5)) ipv6(literal.substring(5)) else ipv4(literal)
          } else hostname(domain)
        localOk && domainOk
      }
    }
  }

  /**
   * A `pattern` compiled for `java.util.regex`, searched (not anchored), as ECMA-262 patterns are. The syntax both
   * share behaves alike; the differences (`$` before a final line break, Java-only constructs) are in
   * docs/schema-registry.md.
   */
  def compilePattern(regex: String, path: String): Pattern =
    try Pattern.compile(regex)
    catch {
      case e: PatternSyntaxException =>
        throw new JsonSchemaUnsupported(
          s"the pattern '${clip(regex)}' at $path is not a regular expression Java " +
            s"reads (${e.getDescription})", "Write the pattern in the syntax ECMA-262 and Java share")
    }

  /** Whether `node` (a schema) is `draft` 2019-09 or later by its root's `$schema`; without one, 2020-12. */
  private def modern(root: JsonNode): Boolean = {
    val s = root.path("$schema").asText("")
    s.isEmpty || s.contains("2019-09") || s.contains("2020-12")
  }

  /**
   * Refuses, by name, what the encoder cannot enforce in the schema `node` at `path` and what it refers to: a
   * keyword of [[Refused]], a `$ref` outside the document, a format of [[Formats.Unchecked]], a `pattern` Java
   * cannot read. `seen`: the `$ref`s already walked.
   */
  def audit(node: JsonNode, root: JsonNode, path: String, seen: collection.mutable.Set[String]): Unit =
    if (node != null && node.isObject) {
      // Where the typed writers read another node in this one's place, its other keywords would go unchecked.
      def besides(keyword: String): Seq[String] =
        node.properties.asScala.map(_.getKey).filter(k => k != keyword && Known.contains(k)).toSeq
      if (node.has("$ref") && modern(root) && besides("$ref").nonEmpty)
        throw new JsonSchemaUnsupported(
          s"the keywords ${besides("$ref").mkString(", ")} beside the $$ref at $path " +
            "are not enforced when values are written",
          "Write them with the $ref in an allOf: {\"allOf\": [{\"$ref\": ...}, {...}]}")
      Seq("oneOf", "anyOf").find(c => node.has(c) && JsonSchemaTypes.nullPair(node.get(c)) >= 0).foreach { c =>
        if (besides(c).nonEmpty)
          throw new JsonSchemaUnsupported(
            s"the keywords ${besides(c).mkString(", ")} beside the $c of a schema and " +
              s"null at $path are not enforced when values are written",
            s"Move them into the $c's schema that is not null")
      }
      node.properties.asScala.foreach { e =>
        val (key, value) = (e.getKey, e.getValue)
        val at = s"$path/${key.replace("~", "~0").replace("/", "~1")}"
        Refused.get(key).foreach(fix =>
          throw new JsonSchemaUnsupported(
            s"the keyword '$key' at $at is not enforced when values are written", fix))
        key match {
          case "format" if value.isTextual && Formats.Unchecked.contains(value.textValue) =>
            throw new JsonSchemaUnsupported(
              s"the format '${value.textValue}' at $at is not checked when values " +
                s"are written (checked: ${CheckedFormats.mkString(", ")})",
              "Remove the format, or check the value with a pattern instead")
          case "pattern" if value.isTextual => compilePattern(value.textValue, at)
          case "$ref" if value.isTextual =>
            val target = value.textValue
            if (target != "#" && !target.startsWith("#/"))
              throw new JsonSchemaUnsupported(s"the $$ref '$target' at $at refers outside the schema",
                "Put the definition under $defs (or definitions) and refer to it as #/$defs/Name")
            if (seen.add(target)) audit(at_(root, target), root, target, seen)
          case "enum" | "const" | "default" | "examples" | "$defs" | "definitions" => // values, or visited by $ref
          case "properties" | "patternProperties" | "dependentSchemas" | "dependencies" =>
            if (value.isObject)
              value.properties.asScala.foreach(p => audit(p.getValue, root, s"$at/${p.getKey}", seen))
          case _ =>
            if (value.isObject) audit(value, root, at, seen)
            else if (value.isArray) (0 until value.size).foreach(i => audit(value.get(i), root, s"$at/$i", seen))
        }
      }
    }

  /** The keywords that assert or apply, in any draft: those the typed writers check, the others and the refused. */
  private val Known: Set[String] = Set("type", "enum", "const", "multipleOf", "minimum", "maximum", "exclusiveMinimum",
    "exclusiveMaximum", "minLength", "maxLength", "pattern", "format", "items", "minItems", "maxItems", "properties",
    "required", "additionalProperties", "$ref") ++ NeedWholeValue ++ Refused.keySet

  private val CheckedFormats =
    Seq("date", "time", "date-time", "uuid", "ipv4", "ipv6", "hostname", "email", "json-pointer", "regex")

  /** The node at the local `$ref` `target` (`#`, `#/...`), or a missing node. */
  private def at_(root: JsonNode, target: String): JsonNode =
    if (target == "#") root else root.at(JsonPointer.compile(target.substring(1)))

  /** Whether the schema `node` asks for the whole-value check beyond the typed writers' (see [[NeedWholeValue]]). */
  def needsWholeValue(node: JsonNode): Boolean =
    node != null && node.isObject && (NeedWholeValue.exists(node.has) || node.path("items").isArray ||
      Seq("enum", "const").exists(k => node.has(k) && hasContainer(node.get(k))))

  private def hasContainer(n: JsonNode): Boolean =
    n.isContainerNode && (!n.isArray || (0 until n.size).exists(i => n.get(i).isContainerNode))

  /** Whether `schema` constrains its values at all (`true` and `{}` do not). */
  def constrains(schema: JsonNode): Boolean =
    schema != null && ((schema.isBoolean && !schema.booleanValue) ||
      (schema.isObject && schema.properties.asScala.exists(e => !Annotations.contains(e.getKey))))

  private val Annotations = Set("$schema", "$id", "id", "$anchor", "$comment", "title", "description", "default",
    "examples", "deprecated", "readOnly", "writeOnly", "$defs", "definitions", "contentEncoding", "contentMediaType",
    "contentSchema")

  /** JSON Schema's equality: numbers by value (1 equals 1.0), objects whatever their properties' order. */
  def same(a: JsonNode, b: JsonNode): Boolean =
    if (a.isNumber && b.isNumber) a.decimalValue.compareTo(b.decimalValue) == 0
    else if (a.isArray && b.isArray) a.size == b.size && (0 until a.size).forall(i => same(a.get(i), b.get(i)))
    else if (a.isObject && b.isObject)
      a.size == b.size && a.properties.asScala.forall(e => b.has(e.getKey) && same(e.getValue, b.get(e.getKey)))
    else a.getNodeType == b.getNodeType && a.equals(b)

  /** Whether `d` is a multiple of `m`, exactly, in decimal (as the values are written). */
  def multipleOf(d: JBigDecimal, m: JBigDecimal): Boolean =
    m.signum > 0 && d.remainder(m).signum == 0

  /** The first way `value` breaks the schema `schema` at `path` (the schema's pointer), or null when it does not. */
  def check(value: JsonNode, schema: JsonNode, root: JsonNode, path: String): String =
    if (schema == null) null
    else if (schema.isBoolean) { if (schema.booleanValue) null else s"the schema at $path allows no value" }
    else if (!schema.isObject) null
    else new Checker(root).check(value, schema, path)

  private final class Checker(root: JsonNode) {
    private val draftModern = modern(root)

    private def broken(value: JsonNode, path: String, rule: String) =
      s"the value ${clip(value.toString)} at $path breaks the schema's rule $rule"

    def check(value: JsonNode, schema: JsonNode, path: String): String =
      if (schema == null) null
      else if (schema.isBoolean) { if (schema.booleanValue) null else s"the schema at $path allows no value" }
      else if (!schema.isObject) null
      else if (schema.has("$ref") && !draftModern) ref(value, schema, path) // draft-07 and older: siblings ignored
      else {
        val checks: Iterator[() => String] = Iterator(
          () => if (schema.has("$ref")) ref(value, schema, path) else null,
          () => typeCheck(value, schema, path),
          () => valuesCheck(value, schema, path),
          () => if (value.isNumber) numberCheck(value, schema, path) else null,
          () => if (value.isTextual) stringCheck(value.textValue, value, schema, path) else null,
          () => if (value.isArray) arrayCheck(value, schema, path) else null,
          () => if (value.isObject) objectCheck(value, schema, path) else null,
          () => combinators(value, schema, path))
        checks.map(_()).find(_ != null).orNull
      }

    private def ref(value: JsonNode, schema: JsonNode, path: String): String = {
      val target = schema.get("$ref").asText
      check(value, at_(root, target), target)
    }

    private def typeCheck(value: JsonNode, schema: JsonNode, path: String): String = {
      val t = schema.get("type")
      if (t == null) null
      else {
        val types = if (t.isArray) (0 until t.size).map(i => t.get(i).asText) else Seq(t.asText)
        if (types.exists(isOfType(value, _))) null
        else s"${clip(value.toString)} at $path is not of the type ${types.mkString(" or ")}"
      }
    }

    private def isOfType(v: JsonNode, t: String): Boolean = t match {
      case "string" => v.isTextual
      case "integer" => v.isIntegralNumber || (v.isNumber && v.decimalValue.stripTrailingZeros.scale <= 0)
      case "number" => v.isNumber
      case "boolean" => v.isBoolean
      case "null" => v.isNull
      case "object" => v.isObject
      case "array" => v.isArray
      case _ => false
    }

    private def valuesCheck(value: JsonNode, schema: JsonNode, path: String): String = {
      val e = schema.get("enum")
      val c = schema.get("const")
      if (e != null && e.isArray && !(0 until e.size).exists(i => same(value, e.get(i))))
        broken(value, path, s"enum $e")
      else if (c != null && !same(value, c)) broken(value, path, s"const $c")
      else null
    }

    private def num(schema: JsonNode, k: String): JBigDecimal = {
      val n = schema.get(k); if (n != null && n.isNumber) n.decimalValue else null
    }

    private def numberCheck(value: JsonNode, schema: JsonNode, path: String): String = {
      val d = value.decimalValue
      def flag(k: String) = schema.path(k).isBoolean && schema.get(k).booleanValue
      val (min, max, xmin, xmax, mult) =
        (num(schema, "minimum"), num(schema, "maximum"), num(schema, "exclusiveMinimum"),
          num(schema, "exclusiveMaximum"), num(schema, "multipleOf"))
      if (min != null && (d.compareTo(min) < 0 || (flag("exclusiveMinimum") && d.compareTo(min) == 0)))
        broken(value, path, s"minimum $min")
      else if (max != null && (d.compareTo(max) > 0 || (flag("exclusiveMaximum") && d.compareTo(max) == 0)))
        broken(value, path, s"maximum $max")
      else if (xmin != null && d.compareTo(xmin) <= 0) broken(value, path, s"exclusiveMinimum $xmin")
      else if (xmax != null && d.compareTo(xmax) >= 0) broken(value, path, s"exclusiveMaximum $xmax")
      else if (mult != null && !multipleOf(d, mult)) broken(value, path, s"multipleOf $mult")
      else null
    }

    private def stringCheck(s: String, value: JsonNode, schema: JsonNode, path: String): String = {
      lazy val n = s.codePointCount(0, s.length)
      val (minL, maxL) = (schema.path("minLength"), schema.path("maxLength"))
      if (minL.isNumber && n < minL.asInt) broken(value, path, s"minLength $minL")
      else if (maxL.isNumber && n > maxL.asInt) broken(value, path, s"maxLength $maxL")
      else if (schema.path("pattern").isTextual &&
        !compilePattern(schema.get("pattern").textValue, path).matcher(s).find())
        broken(value, path, s"pattern ${schema.get("pattern")}")
      else if (schema.path("format").isTextual &&
        !Formats.checker(schema.get("format").textValue).forall(_(s)))
        broken(value, path, s"format ${schema.get("format")}")
      else null
    }

    private def arrayCheck(value: JsonNode, schema: JsonNode, path: String): String = {
      val n = value.size
      val items = schema.get("items")
      // A tuple: prefixItems (2019-09's items array, too), then the rest by items (additionalItems before 2020-12).
      val (tuple, rest) =
        if (schema.has("prefixItems")) (schema.get("prefixItems"), items)
        else if (items != null && items.isArray) (items, schema.get("additionalItems"))
        else (null, items)
      val prefix = if (tuple != null && tuple.isArray) tuple.size else 0
      def tupleKey = if (schema.has("prefixItems")) "prefixItems" else "items"
      def restKey = if (tuple != null && !schema.has("prefixItems")) "additionalItems" else "items"
      val itemProblems = (0 until n).iterator.map { i =>
        if (i < prefix) check(value.get(i), tuple.get(i), s"$path/$tupleKey/$i")
        else check(value.get(i), rest, s"$path/$restKey")
      }
      val first = itemProblems.find(_ != null)
      if (first.isDefined) first.get
      else if (schema.path("minItems").isNumber && n < schema.get("minItems").asInt)
        broken(value, path, s"minItems ${schema.get("minItems")}")
      else if (schema.path("maxItems").isNumber && n > schema.get("maxItems").asInt)
        broken(value, path, s"maxItems ${schema.get("maxItems")}")
      else if (schema.path("uniqueItems").asBoolean(false) &&
        (0 until n).exists(i => (0 until i).exists(j => same(value.get(i), value.get(j)))))
        broken(value, path, "uniqueItems")
      else if (schema.has("contains")) {
        val matching = (0 until n).count(i => check(value.get(i), schema.get("contains"), s"$path/contains") == null)
        val minC = if (schema.path("minContains").isNumber && draftModern) schema.get("minContains").asInt else 1
        val maxC = if (schema.path("maxContains").isNumber && draftModern) schema.get("maxContains").asInt else -1
        if (matching < minC) broken(value, path, s"contains (at least $minC matching)")
        else if (maxC >= 0 && matching > maxC) broken(value, path, s"maxContains $maxC")
        else null
      } else null
    }

    private def objectCheck(value: JsonNode, schema: JsonNode, path: String): String = {
      val props = schema.path("properties")
      val patterns = schema.path("patternProperties").properties.asScala
        .map(e => (compilePattern(e.getKey, s"$path/patternProperties"), e.getKey, e.getValue)).toSeq
      val names = value.properties.asScala.map(_.getKey).toSeq
      val required = schema.path("required")
      val missing = (0 until required.size).map(i => required.get(i).asText).find(r => !value.has(r))
      def each(f: java.util.Map.Entry[String, JsonNode] => String): String =
        value.properties.asScala.iterator.map(f).find(_ != null).orNull
      if (missing.isDefined) s"the required property '${missing.get}' is missing at $path"
      else {
        val propertyProblem = each { e =>
          val (k, v) = (e.getKey, e.getValue)
          val escaped = k.replace("~", "~0").replace("/", "~1")
          val byName = if (props.has(k)) check(v, props.get(k), s"$path/properties/$escaped") else null
          val matched = patterns.filter(_._1.matcher(k).find())
          val byPattern = matched.iterator.map(p => check(v, p._3, s"$path/patternProperties/${p._2}"))
            .find(_ != null).orNull
          val additional =
            if (props.has(k) || matched.nonEmpty || !schema.has("additionalProperties")) null
            else check(v, schema.get("additionalProperties"), s"$path/additionalProperties") match {
              case null => null
              case _ if schema.get("additionalProperties").isBoolean =>
                s"the property '$k' at $path is not allowed (additionalProperties is false)"
              case other => other
            }
          val name =
            if (!schema.has("propertyNames")) null
            else check(com.fasterxml.jackson.databind.node.TextNode.valueOf(k), schema.get("propertyNames"),
              s"$path/propertyNames")
          Seq(byName, byPattern, additional, name).find(_ != null).orNull
        }
        val dependent = {
          val dr = schema.path("dependentRequired").properties.asScala.toSeq ++
            schema.path("dependencies").properties.asScala.filter(_.getValue.isArray)
          val ds = schema.path("dependentSchemas").properties.asScala.toSeq ++
            schema.path("dependencies").properties.asScala.filter(!_.getValue.isArray)
          dr.filter(e => value.has(e.getKey)).flatMap(e =>
            (0 until e.getValue.size).map(i => e.getValue.get(i).asText).find(r => !value.has(r))
              .map(r => s"the property '$r' is missing at $path, required when '${e.getKey}' is there")).headOption
            .orElse(ds.filter(e => value.has(e.getKey)).iterator
                .map(e => check(value, e.getValue, s"$path/dependentSchemas/${e.getKey}")).find(_ != null))
            .orNull
        }
        if (propertyProblem != null) propertyProblem
        else if (dependent != null) dependent
        else if (schema.path("minProperties").isNumber && names.size < schema.get("minProperties").asInt)
          broken(value, path, s"minProperties ${schema.get("minProperties")}")
        else if (schema.path("maxProperties").isNumber && names.size > schema.get("maxProperties").asInt)
          broken(value, path, s"maxProperties ${schema.get("maxProperties")}")
        else null
      }
    }

    private def combinators(value: JsonNode, schema: JsonNode, path: String): String = {
      def branches(k: String) = { val n = schema.path(k); (0 until n.size).map(i => (n.get(i), s"$path/$k/$i")) }
      val allOf = branches("allOf").iterator.map { case (s, p) => check(value, s, p) }.find(_ != null)
      lazy val anyOk = branches("anyOf").exists { case (s, p) => check(value, s, p) == null }
      lazy val oneCount = branches("oneOf").count { case (s, p) => check(value, s, p) == null }
      if (allOf.isDefined) allOf.get
      else if (schema.has("anyOf") && !anyOk) broken(value, path, "anyOf (it fits none of its schemas)")
      else if (schema.has("oneOf") && oneCount != 1)
        broken(value, path, s"oneOf (it fits $oneCount of its schemas, not exactly one)")
      else if (schema.has("not") && check(value, schema.get("not"), s"$path/not") == null)
        broken(value, path, "not")
      else if (schema.has("if")) {
        if (check(value, schema.get("if"), s"$path/if") == null) check(value, schema.get("then"), s"$path/then")
        else check(value, schema.get("else"), s"$path/else")
      } else null
    }
  }
}

/**
 * A JSON Schema the encoder cannot enforce: `problem` names the keyword (or format, or `$ref`) and its path, `fix`
 * says what to do. It becomes `[KINESIS_INVALID_SCHEMA]` when the write is defined.
 */
private[sparkkinesis] final class JsonSchemaUnsupported(val problem: String, val fix: String)
  extends JsonSchemaConversionException(s"$problem. $fix")
