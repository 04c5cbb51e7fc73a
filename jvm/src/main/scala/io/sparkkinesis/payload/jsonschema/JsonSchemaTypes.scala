package io.sparkkinesis.payload.jsonschema

import scala.util.control.NonFatal

import io.sparkkinesis.compat.CollectionConverters._

import com.fasterxml.jackson.core.{JsonFactory, JsonFactoryBuilder, JsonPointer, StreamReadFeature}
import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import org.apache.spark.sql.types._

/**
 * The Spark type of the values of a JSON Schema (draft-04 to 2020-12), as [[JsonSchemaDecoder]] produces them and
 * [[JsonSchemaEncoder]] takes them:
 *   - `"type": "object"` with `"properties"`: a struct, its fields in the order the properties are written, each
 *     nullable unless `"required"` lists it and its type has no null; with `"additionalProperties"` and no
 *     `"properties"`: a map from string to the type of `"additionalProperties"` (when that is `true` or absent, the
 *     values are their JSON text);
 *   - `"array"`: an array of the type of `"items"`; `"string"`: a string, a date for `"format": "date"`, a timestamp
 *     for `"date-time"`; `"integer"`: a long; `"number"`: a double; `"boolean"`; `"null"`: Spark's null type;
 *   - a `"type"` array with `"null"` (`["string", "null"]`): that type, nullable; `["integer", "number"]`: a double;
 *     an `"enum"` or `"const"` of strings: a string;
 *   - `"$ref"` to a place in the same document (`#/$defs/X`, `#/definitions/X`, any `#/...`): the type there;
 *   - `"oneOf"` or `"anyOf"` of a schema and `{"type": "null"}`: the schema's type, nullable.
 * Anything else (other `oneOf`/`anyOf`/`allOf`, no `"type"`, several types, a tuple's `"items"`) is the fallback: a
 * string that holds the value's JSON text, so that no part of a value is lost.
 *
 * Paths in messages are JSON pointers into the schema (`#/properties/lines/items`), walked from the root; a `$ref`
 * is followed in place, so the path is where the value sits, not where its definition is written.
 */
private[sparkkinesis] object JsonSchemaTypes {

  /**
   * The Spark type of the values of the JSON Schema `definition`. Throws [[JsonSchemaConversionException]], naming
   * the path, for a schema that is not JSON, a `$ref` that cannot be resolved or that nests its own definition.
   */
  def sparkType(definition: String): DataType = shapeOf(definition).dataType

  /**
   * What a schema's values are, with the schema node (for its rules) and its path. `pair`: `oneOf` or `anyOf` when
   * `node` is (or is where leads) one branch of such a pair with `{"type": "null"}` (which allows null, not `node`),
   * else null; `pairBranch`: that branch as written (a `$ref`, another pair, ...).
   */
  private[jsonschema] final case class Shape(
      kind: Kind,
      nullable: Boolean,
      path: String,
      node: JsonNode,
      pair: String = null,
      pairBranch: JsonNode = null) {

    /** Whether null is allowed by the other branch of a pair with `{"type": "null"}`, not by `node`. */
    def nullByPair: Boolean = pair != null
    def dataType: DataType = kind match {
      case StringKind | RawKind => StringType
      case DateKind => DateType
      case TimestampKind => TimestampType
      case IntegerKind => LongType
      case NumberKind => DoubleType
      case BooleanKind => BooleanType
      case NullKind => NullType
      case ObjectKind(properties, _, _) =>
        StructType(properties.map(p => StructField(p.name, p.shape.dataType, p.sparkNullable)).toArray)
      case MapKind(values) => MapType(StringType, values.dataType, valueContainsNull = true)
      case ArrayKind(items) => ArrayType(items.dataType, items.nullable)
    }
  }

  private[jsonschema] sealed abstract class Kind
  private[jsonschema] case object StringKind extends Kind
  private[jsonschema] case object DateKind extends Kind
  private[jsonschema] case object TimestampKind extends Kind
  private[jsonschema] case object IntegerKind extends Kind
  private[jsonschema] case object NumberKind extends Kind
  private[jsonschema] case object BooleanKind extends Kind
  private[jsonschema] case object NullKind extends Kind

  /** Any JSON value, held as its JSON text. */
  private[jsonschema] case object RawKind extends Kind

  /** An object with properties; `closed`: `"additionalProperties": false`; `extra`: the others' schema, if any. */
  private[jsonschema] final case class ObjectKind(
      properties: IndexedSeq[Property],
      closed: Boolean,
      extra: Option[Shape]) extends Kind
  private[jsonschema] final case class MapKind(values: Shape) extends Kind
  private[jsonschema] final case class ArrayKind(items: Shape) extends Kind

  private[jsonschema] final case class Property(name: String, shape: Shape, required: Boolean) {

    /** Whether the Spark field may be null: the property may be missing, or its value null. */
    def sparkNullable: Boolean = !required || shape.nullable
  }

  private val mapper = new ObjectMapper()

  /** A factory whose errors do not quote the payload. */
  private[jsonschema] def newFactory(): JsonFactory =
    new JsonFactoryBuilder().disable(StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION).build()

  /** The shape of the schema `definition`. */
  private[jsonschema] def shapeOf(definition: String): Shape = {
    val root =
      try mapper.readTree(definition)
      catch {
        case NonFatal(e) => throw new JsonSchemaConversionException(s"the JSON Schema is not valid JSON: $e", e)
      }
    if (root == null) throw new JsonSchemaConversionException("the JSON Schema is empty")
    shapeAt(root, root, "#", List("#"))
  }

  /** A kind in words, for messages. */
  private[jsonschema] def describe(kind: Kind): String = kind match {
    case StringKind => "a JSON string"
    case DateKind => "a JSON string (format date, yyyy-MM-dd)"
    case TimestampKind => "a JSON string (format date-time, ISO-8601 with an offset)"
    case IntegerKind => "a JSON integer"
    case NumberKind => "a JSON number"
    case BooleanKind => "a JSON boolean"
    case NullKind => "JSON null"
    case RawKind => "any JSON value"
    case _: ObjectKind | _: MapKind => "a JSON object"
    case _: ArrayKind => "a JSON array"
  }

  private[jsonschema] def clip(s: String): String = if (s.length <= 40) s else s.take(40) + "..."

  /** `name` as a token of a JSON pointer. */
  private def escape(name: String): String = name.replace("~", "~0").replace("/", "~1")

  /** An error whose message names the path. */
  private def fail(message: String) = new JsonSchemaConversionException(message)

  /**
   * The shape of the schema `node` at `path`. `refs`: the `$ref`s followed on the way here (and `#`, the root):
   * meeting one again is a loop.
   */
  private def shapeAt(node: JsonNode, root: JsonNode, path: String, refs: List[String]): Shape =
    if (node.isBoolean) Shape(RawKind, nullable = true, path, node) // true: any value (false: none)
    else if (!node.isObject) throw fail(s"the schema at $path is neither an object nor a boolean")
    else if (node.has("$ref")) resolve(node.get("$ref"), root, path, refs)
    else {
      val combinator = Seq("oneOf", "anyOf", "allOf").find(node.has)
      combinator match {
        case Some(c @ ("oneOf" | "anyOf")) if nullPair(node.get(c)) >= 0 =>
          val i = nullPair(node.get(c))
          shapeAt(node.get(c).get(i), root, s"$path/$c/$i", refs).copy(nullable = true, pair = c,
            pairBranch = node.get(c).get(i))
        case Some(_) => Shape(RawKind, nullable = true, path, node)
        case None => typed(node, root, path, refs)
      }
    }

  /** The index of the other schema when `branches` is a schema and `{"type": "null"}`, else -1. */
  private[jsonschema] def nullPair(branches: JsonNode): Int = {
    def isNull(n: JsonNode) = n.isObject && n.path("type").isTextual && n.get("type").textValue == "null"
    if (!branches.isArray || branches.size != 2) -1
    else if (isNull(branches.get(0)) && !isNull(branches.get(1))) 1
    else if (isNull(branches.get(1)) && !isNull(branches.get(0))) 0
    else -1
  }

  /** The shape of what a `$ref` refers to: a JSON pointer into the same document (`#` is the root). */
  private def resolve(ref: JsonNode, root: JsonNode, path: String, refs: List[String]): Shape = {
    val at = s"$path/$$ref"
    if (!ref.isTextual) throw fail(s"the $$ref at $at is not a string")
    val target = ref.textValue
    if (refs.contains(target))
      throw fail(s"the $$ref '$target' at $at is recursive (it is inside what it refers to): a Spark type cannot " +
        "nest itself")
    if (target != "#" && !target.startsWith("#/"))
      throw fail(s"the $$ref '$target' at $at is not within the schema: only refs like #/$$defs/X or " +
        "#/definitions/X are resolved")
    val resolved = if (target == "#") root else root.at(JsonPointer.compile(target.substring(1)))
    if (resolved.isMissingNode) throw fail(s"the $$ref '$target' at $at refers to nothing in the schema")
    shapeAt(resolved, root, path, target :: refs)
  }

  /** The elements of an array node (none for any other node). */
  private def items(n: JsonNode): IndexedSeq[JsonNode] = (0 until n.size).map(i => n.get(i))

  /** A schema with a "type", or an enum or const, or none of these (the fallback). */
  private def typed(node: JsonNode, root: JsonNode, path: String, refs: List[String]): Shape = {
    val types: Seq[String] = node.get("type") match {
      case null => Nil
      case t if t.isTextual => Seq(t.textValue)
      case t if t.isArray && items(t).forall(_.isTextual) => items(t).map(_.textValue).distinct
      case _ => throw fail(s"the type at $path/type is neither a string nor an array of strings")
    }
    val values = items(node.path("enum")) ++ Option(node.get("const")).toSeq
    val nonNull = types.filter(_ != "null")
    val nullable = types.contains("null") || values.exists(_.isNull)
    nonNull match {
      case Seq(t) => Shape(kindOf(t, node, root, path, refs), nullable, path, node)
      case Seq() if types.nonEmpty => Shape(NullKind, nullable = true, path, node)
      case Seq() if values.nonEmpty && values.forall(v => v.isTextual || v.isNull) =>
        Shape(StringKind, nullable, path, node)
      case several if several.toSet == Set("integer", "number") => Shape(NumberKind, nullable, path, node)
      case _ => Shape(RawKind, nullable = true, path, node)
    }
  }

  /** The kind of values of one JSON type (not `"null"`). */
  private def kindOf(t: String, node: JsonNode, root: JsonNode, path: String, refs: List[String]): Kind = t match {
    case "string" =>
      Option(node.get("format")).filter(_.isTextual).map(_.textValue).getOrElse("") match {
        case "date" => DateKind
        case "date-time" => TimestampKind
        case _ => StringKind
      }
    case "integer" => IntegerKind
    case "number" => NumberKind
    case "boolean" => BooleanKind
    case "object" => objectKind(node, root, path, refs)
    case "array" =>
      val itemsNode = node.get("items")
      // A tuple's items are checked as the whole array is (their schemas depend on their place), not one by one.
      if (itemsNode == null || itemsNode.isArray || node.has("prefixItems"))
        ArrayKind(Shape(RawKind, nullable = true, s"$path/items", null))
      else ArrayKind(shapeAt(itemsNode, root, s"$path/items", refs))
    case other => throw fail(s"the type '$other' at $path/type is not a JSON Schema type")
  }

  /** An object with `"properties"` (or `"additionalProperties": false`): a struct; otherwise a map. */
  private def objectKind(node: JsonNode, root: JsonNode, path: String, refs: List[String]): Kind = {
    val additional = node.get("additionalProperties")
    val closed = additional != null && additional.isBoolean && !additional.booleanValue
    val properties = node.get("properties")
    if ((properties != null && properties.isObject) || closed) {
      val required = items(node.path("required")).filter(_.isTextual).map(_.textValue).toSet
      val props = if (properties == null || !properties.isObject) IndexedSeq.empty
      else
        properties.properties.asScala.toIndexedSeq.map { e =>
          Property(e.getKey, shapeAt(e.getValue, root, s"$path/properties/${escape(e.getKey)}", refs),
            required(e.getKey))
        }
      val extra =
        if (additional != null && additional.isObject)
          Some(shapeAt(additional, root, s"$path/additionalProperties", refs))
        else None
      ObjectKind(props, closed, extra)
    } else if (additional == null || additional.isBoolean)
      MapKind(Shape(RawKind, nullable = true, s"$path/additionalProperties", additional))
    else MapKind(shapeAt(additional, root, s"$path/additionalProperties", refs))
  }
}

/** A JSON Schema or value that does not fit Spark's types, or the reverse; the message names the JSON pointer path. */
private[sparkkinesis] class JsonSchemaConversionException(message: String, cause: Throwable = null)
  extends RuntimeException(message, cause)
