package io.sparkkinesis.payload.protobuf

import io.sparkkinesis.compat.CollectionConverters._
import scala.collection.mutable
import scala.util.control.NonFatal

import com.squareup.wire.Syntax
import com.squareup.wire.schema.{
  CoreLoader,
  EnumType,
  ErrorCollector,
  Field => WireField,
  Linker,
  Loader,
  Location,
  MessageType,
  ProtoFile,
  ProtoType,
  Schema,
  SchemaException
}
import com.squareup.wire.schema.internal.parser.{
  GroupElement,
  MessageElement,
  OneOfElement,
  ProtoFileElement,
  ProtoParser => WireParser,
  TypeElement
}

import ProtoSchema._

/**
 * Reads the `.proto` text of a Glue Schema Registry schema with Square's Wire (`wire-schema`, the library AWS's own
 * Java serde reads these schemas with): Wire parses it and links it (names resolved as protoc resolves them, field
 * numbers and names checked, imports loaded), and this maps the linked file to the connector's [[ProtoSchema]].
 *
 * What Wire does not model, this adds as protoc would: the entry message of each `map<K, V>` field
 * (`<Name>Entry`, nested in the field's message), which counts in the message index; an entry message written out
 * with `option map_entry = true` (as AWS's Java serializer registers maps) becomes a map again; a `group`'s message
 * keeps its place in the index, and the group field is read past as an unknown field.
 *
 * Imports: Google's well-known types (the `google/protobuf` files Wire carries, and `field_mask.proto`,
 * declared here) resolve; any other import is refused by name, since a registry schema is one file.
 */
private[protobuf] object ProtoFiles {

  /** The path the schema's own text is read as, in Wire's messages. */
  private val SchemaPath = "schema.proto"

  /** Well-known files Wire does not carry, declared here from their published field numbers. */
  private val Declared: Map[String, String] = Map(
    "google/protobuf/field_mask.proto" ->
      "syntax = \"proto3\";\npackage google.protobuf;\nmessage FieldMask {\n  repeated string paths = 1;\n}\n")

  /** The well-known files in wire-schema's own resources (google/protobuf). */
  private val Carried: Set[String] =
    Set("any", "descriptor", "duration", "empty", "struct", "timestamp", "wrappers")
      .map(n => s"google/protobuf/$n.proto")

  // Kotlin's companion object, through its static field: Scala 2.12 cannot tell `ProtoFile.Companion` the field from
  // `ProtoFile.Companion` the class.
  private val protoFiles =
    classOf[ProtoFile].getField("Companion").get(null).asInstanceOf[ProtoFile.Companion]

  /** Wire's file of a parsed one, as its linker takes it. */
  private def linkable(element: ProtoFileElement): ProtoFile = protoFiles.get(element)

  /** The schemas of the texts read last (immutable values), for the decoders and encoders of every task. */
  private val recent = new java.util.LinkedHashMap[String, ProtoSchema](16, 0.75f, true) {
    override protected def removeEldestEntry(eldest: java.util.Map.Entry[String, ProtoSchema]): Boolean = size > 64
  }

  /** The schema of `.proto` text; [[ProtobufConversionException]] naming the problem otherwise. */
  def read(text: String): ProtoSchema = {
    val known = recent.synchronized(recent.get(text))
    if (known != null) known
    else {
      val schema = readNew(text)
      recent.synchronized(recent.put(text, schema))
      schema
    }
  }

  private def readNew(text: String): ProtoSchema = {
    // A byte order mark is no part of the text (protoc reads past it too); nothing else is cut.
    val body = text.stripPrefix("\uFEFF")
    val element =
      try new WireParser(Location.get(SchemaPath), body.toCharArray).readProtoFile()
      catch {
        case NonFatal(e) if String.valueOf(e.getMessage).contains("edition") =>
          throw new ProtobufConversionException("Protobuf editions ('edition = ...') are not supported: give the " +
              "schema as syntax = \"proto2\" or \"proto3\"", e)
        case NonFatal(e) => throw new ProtobufConversionException(s"it is not valid .proto text: ${brief(e)}", e)
      }
    (element.getImports.asScala ++ element.getPublicImports.asScala ++ element.getWeakImports.asScala).foreach {
      path =>
        if (!Carried(path) && !Declared.contains(path)) throw refusedImport(path, body)
    }
    val file =
      try linkable(withoutGroups(element))
      catch {
        case NonFatal(e) => throw new ProtobufConversionException(s"it is not a valid .proto schema: ${brief(e)}", e)
      }
    val schema =
      try new Linker(new FileLoader(file), new ErrorCollector(), false, true).link(Seq(file).asJava)
      catch {
        case e: SchemaException => throw new ProtobufConversionException(s"it is not a valid .proto schema: " +
              brief(e), e)
        case NonFatal(e) => throw new ProtobufConversionException(s"it is not valid .proto text: ${brief(e)}", e)
      }
    new Mapping(schema, schema.protoFile(SchemaPath), groupsOf(element.getTypes.asScala.toSeq, element.getPackageName))
      .result()
  }

  private def refusedImport(path: String, text: String): ProtobufConversionException = {
    val line = text.linesIterator.indexWhere(_.contains("\"" + path + "\"")) + 1
    val what =
      if (path.startsWith("google/type/") || path.startsWith("google/api/"))
        s"'$path' is one of Google's common protos (googleapis), which this release does not carry"
      else if (path.startsWith("google/protobuf/"))
        s"'$path' is not one of the well-known types this release resolves (${(Carried -
            "google/protobuf/descriptor.proto" ++ Declared.keySet).toSeq.sorted.mkString(", ")})"
      else s"'$path' is another file, and a Glue Schema Registry Protobuf schema is one self-contained .proto file"
    new ProtobufConversionException(
      s"${if (line > 0) s"line $line: " else ""}import $what. Declare the messages it gives in the schema's own text " +
        "instead of importing them")
  }

  /** The first line of an error's message, without Wire's long location prefixes repeated. */
  private def brief(e: Throwable): String =
    String.valueOf(e.getMessage).linesIterator.map(_.trim).filter(_.nonEmpty).take(3).mkString("; ").take(400)

  /**
   * The file without its `group` fields, which Wire does not link: a reader reads past them as unknown fields (their
   * values are not columns). Their messages still count in the message index ([[groupsOf]]).
   */
  private def withoutGroups(file: ProtoFileElement): ProtoFileElement = {
    def strip(t: TypeElement): TypeElement = t match {
      case m: MessageElement =>
        new MessageElement(m.getLocation, m.getName, m.getDocumentation, m.getNestedTypes.asScala.map(strip).asJava,
          m.getOptions, m.getReserveds, m.getFields,
          m.getOneOfs.asScala.map(o =>
            new OneOfElement(o.getName, o.getDocumentation, o.getFields,
              java.util.Collections.emptyList[GroupElement](), o.getOptions, o.getLocation)).asJava,
          m.getExtensions, java.util.Collections.emptyList[GroupElement](), m.getExtendDeclarations)
      case other => other
    }
    new ProtoFileElement(file.getLocation, file.getPackageName, file.getSyntax, file.getImports,
      file.getPublicImports, file.getWeakImports, file.getTypes.asScala.map(strip).asJava, file.getServices,
      file.getExtendDeclarations, file.getOptions)
  }

  /** Full names of the messages protoc makes of `group` fields (Wire keeps no type for them). */
  private def groupsOf(types: Seq[TypeElement], scope: String): Seq[String] = types.flatMap {
    case m: MessageElement =>
      val name = if (scope == null || scope.isEmpty) m.getName else s"$scope.${m.getName}"
      (m.getGroups.asScala ++ m.getOneOfs.asScala.flatMap(_.getGroups.asScala)).map(g => s"$name.${g.getName}")
        .toSeq ++ groupsOf(m.getNestedTypes.asScala.toSeq, name)
    case _ => Nil
  }

  /**
   * Loads the schema's own file, the well-known files declared here, and those wire-schema's jar carries
   * (descriptor.proto, which the linker reads options with, and the well-known types), taken from that jar itself:
   * Spark's own jars carry other versions of the same files at the same paths, which the class loader may find first.
   */
  private final class FileLoader(file: ProtoFile) extends Loader {
    def load(path: String): ProtoFile =
      if (path == SchemaPath) file
      else
        parsedCopy(path) match {
          case Some(element) => linkable(element)
          case None => CoreLoader.INSTANCE.load(path)
        }
    def withErrors(errors: ErrorCollector): Loader = this
  }

  // Parsed once per JVM: descriptor.proto alone is 58 KB of text, which the linker loads for every schema. Wire's
  // parsed elements are immutable; the linker links a new ProtoFile made of them each time.
  private val parsedCopies = new java.util.concurrent.ConcurrentHashMap[String, Option[ProtoFileElement]]()

  private def parsedCopy(path: String): Option[ProtoFileElement] = parsedCopies.computeIfAbsent(path,
    p =>
      Declared.get(p).orElse(ownCopy(p)).map(text => new WireParser(Location.get(p), text.toCharArray).readProtoFile()))

  private val ownCopies = new java.util.concurrent.ConcurrentHashMap[String, Option[String]]()

  /** The text of `path` in the jar wire-schema's classes come from (the connector's, once assembled). */
  private[protobuf] def ownCopy(path: String): Option[String] = ownCopies.computeIfAbsent(path,
    p =>
      try {
        val jar = classOf[CoreLoader].getProtectionDomain.getCodeSource.getLocation
        val connection = new java.net.URL(s"jar:$jar!/$p").openConnection()
        connection.setUseCaches(false) // a cached JarFile would stay open, and be shared with the class loader's
        val in = connection.getInputStream
        try Some(new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8))
        finally in.close()
      } catch { case NonFatal(_) => None })

  /** protoc's name of the entry message of map field `field`: `attribute_values` gives `AttributeValuesEntry`. */
  def entryName(field: String): String = {
    val out = new StringBuilder
    var upper = true
    field.foreach { c =>
      if (c == '_') upper = true
      else {
        out += (if (upper && c >= 'a' && c <= 'z') (c - 'a' + 'A').toChar else c)
        upper = false
      }
    }
    out.append("Entry").toString
  }

  /** The linked file as a [[ProtoSchema]]: its own messages, and the imported types its fields reach. */
  private final class Mapping(schema: Schema, file: ProtoFile, groups: Seq[String]) {
    private val syntax = if (file.getSyntax == Syntax.PROTO_3) "proto3" else "proto2"
    private val own = file.typesAndNestedTypes().asScala.map(_.getType.toString).toSet
    private val messages = mutable.LinkedHashMap.empty[String, Message]
    private val enums = mutable.LinkedHashMap.empty[String, Enum]
    private val pending = mutable.Queue.empty[ProtoType]

    def result(): ProtoSchema = {
      file.typesAndNestedTypes().asScala.foreach(t => add(t.getType))
      while (pending.nonEmpty) add(pending.dequeue())
      groups.foreach(g => if (!messages.contains(g)) messages(g) = Message(g, IndexedSeq.empty))
      val (ownMessages, imported) = messages.values.toIndexedSeq.partition(m => isOwn(m.fullName))
      ProtoSchema(syntax, Option(file.getPackageName).getOrElse(""), ownMessages.sortBy(_.fullName),
        enums.values.toIndexedSeq, imported.sortBy(_.fullName))
    }

    // A map entry protoc makes belongs to the file of its message.
    private def isOwn(fullName: String): Boolean =
      own(fullName) || groups.contains(fullName) || own(fullName.substring(0, math.max(0, fullName.lastIndexOf('.'))))

    private def add(t: ProtoType): Unit = {
      val name = t.toString
      if (!messages.contains(name) && !enums.contains(name)) schema.getType(t) match {
        case m: MessageType => message(m)
        case e: EnumType =>
          enums(name) = Enum(name, e.getConstants.asScala.map(c => (c.getName, c.getTag)).toIndexedSeq,
            closed = e.getSyntax != Syntax.PROTO_3)
        case _ =>
      }
    }

    private def isMapEntry(m: MessageType): Boolean =
      m.getOptions.getElements.asScala.exists(o => o.getName == "map_entry" && String.valueOf(o.getValue) == "true")

    private def message(m: MessageType): Unit = {
      val fullName = m.getType.toString
      messages(fullName) = Message(fullName, IndexedSeq.empty) // placed first: a message may name itself
      val oneofOf = m.getOneOfs.asScala.flatMap(o => o.getFields.asScala.map(f => f.getTag -> o.getName)).toMap
      val declared = (m.getDeclaredFields.asScala ++ m.getOneOfs.asScala.flatMap(_.getFields.asScala))
        .sortBy(f => (f.getLocation.getLine, f.getLocation.getColumn))
      val fields = declared.map(f => field(m, f, oneofOf.getOrElse(f.getTag, null))).toIndexedSeq
      messages(fullName) = Message(fullName, fields, mapEntry = isMapEntry(m))
    }

    private def field(m: MessageType, f: WireField, oneof: String): Field = {
      val t = f.getType
      val line = f.getLocation.getLine
      val label =
        if (oneof != null) Optional
        else
          f.getEncodeMode match {
            case WireField.EncodeMode.REQUIRED => Required
            case WireField.EncodeMode.REPEATED | WireField.EncodeMode.PACKED | WireField.EncodeMode.MAP => Repeated
            case WireField.EncodeMode.OMIT_IDENTITY => Implicit
            case _ => Optional
          }
      val packed = f.getOptions.getElements.asScala.find(_.getName == "packed").map(o =>
        String.valueOf(o.getValue) ==
          "true")
      val fieldType: FieldType =
        if (t.isMap) {
          val entry = s"${m.getType}.${entryName(f.getName)}"
          val (key, value) = (valueType(t.getKeyType), valueType(t.getValueType))
          messages(entry) = Message(entry,
            IndexedSeq(Field("key", 1, Optional, key, null, None, line),
              Field("value", 2, Optional, value, null,
                None, line)), mapEntry = true)
          MapOf(key.asInstanceOf[Scalar], value, entry)
        } else
          valueType(t) match {
            case MessageRef(name) if label == Repeated && entryOf(t).isDefined =>
              val (key, value) = entryOf(t).get
              MapOf(key, value, name)
            case other => other
          }
      Field(f.getName, f.getTag, label, fieldType, oneof, packed, line, Option(f.getDefault))
    }

    /** The key and value types of a message written with `option map_entry = true`. */
    private def entryOf(t: ProtoType): Option[(Scalar, FieldType)] = schema.getType(t) match {
      case m: MessageType if isMapEntry(m) =>
        (Option(m.field(1)), Option(m.field(2))) match {
          case (Some(k), Some(v)) if k.getType.isScalar =>
            Some((Scalar(k.getType.toString), valueType(v.getType)))
          case _ => None
        }
      case _ => None
    }

    private def valueType(t: ProtoType): FieldType =
      if (t.isScalar) Scalar(t.toString)
      else {
        if (!messages.contains(t.toString) && !enums.contains(t.toString)) pending.enqueue(t)
        schema.getType(t) match {
          case _: EnumType => EnumRef(t.toString)
          case _ => MessageRef(t.toString)
        }
      }
  }
}
