package io.sparkkinesis.payload.protobuf

import ProtoSchema._
import io.sparkkinesis.wire.Wire

/**
 * A Protobuf schema, a `.proto` file's messages and enums, as [[ProtoSchema.parse]] reads them from the text the
 * Glue Schema Registry holds. `messages` has every message of the file, nested ones and the entry message protoc
 * makes of each `map<K, V>` field (`Order.AttributesEntry` for `attributes`), sorted by full name: a message's
 * position there is the message index of Glue's Protobuf frame. `imported` has the messages of imported files
 * (`google.protobuf.Timestamp`) that the file's fields use: they have no message index. `enums` has the enums of
 * the file and those of imported files its fields use.
 */
private[sparkkinesis] final case class ProtoSchema(
    syntax: String,
    packageName: String,
    messages: IndexedSeq[Message],
    enums: IndexedSeq[Enum],
    imported: IndexedSeq[Message] = IndexedSeq.empty) {

  private val byFullName: Map[String, Int] = messages.indices.map(i => messages(i).fullName -> i).toMap
  private val importedByName: Map[String, Message] = imported.map(m => m.fullName -> m).toMap
  private val enumsByName: Map[String, Enum] = enums.map(e => e.fullName -> e).toMap

  /**
   * The message of full name `name` (package included, `shop.Order.Line`), else the one message whose full name
   * ends with `.name` (a simple or partly qualified name). Throws [[ProtobufConversionException]] otherwise.
   */
  def message(name: String): Message = messages(indexOf(name))

  /** The Glue message index of [[message]]`(name)`. */
  def indexOf(name: String): Int = byFullName.getOrElse(name.stripPrefix("."), {
      val matching = messages.indices.filter(i => messages(i).fullName.endsWith("." + name))
      if (matching.size == 1) matching.head
      else if (matching.isEmpty)
        throw new ProtobufConversionException(s"the Protobuf schema has no message $name (messages: " +
          messages.map(_.fullName).mkString(", ") + ")")
      else
        throw new ProtobufConversionException(s"the Protobuf message name $name is ambiguous: " +
          matching.map(messages(_).fullName).mkString(", ") + "; give the full name")
    })

  /** The message of full name `fullName`, of the file or imported, which a field's type names (so it exists). */
  def messageNamed(fullName: String): Message = byFullName.get(fullName) match {
    case Some(i) => messages(i)
    case None => importedByName(fullName)
  }

  /** The enum of full name `fullName`, which a field's type names (so it exists). */
  def enumNamed(fullName: String): Enum = enumsByName(fullName)
}

private[sparkkinesis] object ProtoSchema {

  /**
   * Reads `.proto` text (proto2 or proto3) with Square's Wire, which parses and links it ([[ProtoFiles]]): messages
   * (nested), enums, fields with their labels and defaults, maps (`map<K, V>`, or entry messages with
   * `option map_entry = true`), oneofs, imports of Google's well-known types. Throws [[ProtobufConversionException]]
   * naming the line and element on what it cannot read or refuses.
   */
  def parse(text: String): ProtoSchema = ProtoFiles.read(text)

  /** How a field is labelled, which says whether it is repeated and whether an absent value is null. */
  sealed abstract class Label

  /** A proto3 field with no label: absent means the type's default, never null (but a message field is). */
  case object Implicit extends Label

  /** `optional` (proto2, proto3 explicit presence) or a oneof member: absent means null. */
  case object Optional extends Label

  /** proto2 `required`. */
  case object Required extends Label

  /** `repeated`, and `map` fields (repeated entries). */
  case object Repeated extends Label

  /** The type of a field's values. */
  sealed abstract class FieldType

  /** One of the 15 scalar types, by its `.proto` name (`int32`, `sfixed64`, `string`, ...). */
  final case class Scalar(name: String) extends FieldType

  /** A message, by full name. */
  final case class MessageRef(fullName: String) extends FieldType

  /** An enum, by full name. */
  final case class EnumRef(fullName: String) extends FieldType

  /** A `map<key, value>`: on the wire a repeated message `entry` with `key = 1` and `value = 2`. */
  final case class MapOf(key: Scalar, value: FieldType, entry: String) extends FieldType

  /** The scalar types. */
  val ScalarTypes: Set[String] = Set("double", "float", "int32", "int64", "uint32", "uint64", "sint32", "sint64",
    "fixed32", "fixed64", "sfixed32", "sfixed64", "bool", "string", "bytes")

  /**
   * A field: `oneof` is the name of its oneof group or null, `packed` its `packed` option if set, `default` the
   * proto2 `[default = ...]` as the `.proto` text gives it (strings and bytes unescaped). `line` is where the file
   * declares it, for messages.
   */
  final case class Field(
      name: String,
      number: Int,
      label: Label,
      fieldType: FieldType,
      oneof: String,
      packed: Option[Boolean],
      line: Int,
      default: Option[String] = None) {
    def repeated: Boolean = label == Repeated
  }

  /** A message, its fields as declared; `mapEntry` for the message protoc makes of a `map` field. */
  final case class Message(fullName: String, fields: IndexedSeq[Field], mapEntry: Boolean = false) {
    def name: String = fullName.substring(fullName.lastIndexOf('.') + 1)
    def field(fieldName: String): Option[Field] = fields.find(_.name == fieldName)
  }

  /**
   * An enum, its values (name, number) as declared; the first is the default. A `closed` enum (one of a proto2
   * file) takes no other number: protobuf reads a number it lacks as an unknown field, not as the field's value.
   */
  final case class Enum(fullName: String, values: IndexedSeq[(String, Int)], closed: Boolean = false)

  /** Whether values of `scalar` may be packed: all but strings and bytes (and enums, which are varints). */
  def packable(t: FieldType): Boolean = t match {
    case Scalar(name) => name != "string" && name != "bytes"
    case EnumRef(_) => true
    case _ => false
  }

  /** The wire type of one value of a type. */
  def wireType(t: FieldType): Int = t match {
    case Scalar("double" | "fixed64" | "sfixed64") => Wire.Fixed64
    case Scalar("float" | "fixed32" | "sfixed32") => Wire.Fixed32
    case Scalar("string" | "bytes") | MessageRef(_) | MapOf(_, _, _) => Wire.LengthDelimited
    case _ => Wire.Varint
  }

  /** Whether a repeated field of `syntax` is written packed: proto3 packs by default, proto2 only if asked. */
  def writesPacked(syntax: String, f: Field): Boolean =
    f.repeated && packable(f.fieldType) && f.packed.getOrElse(syntax == "proto3")
}

/** A `.proto` schema or a value that does not fit it or Spark's types; the message names the element or field. */
private[sparkkinesis] final class ProtobufConversionException(message: String, cause: Throwable = null)
  extends RuntimeException(message, cause)
