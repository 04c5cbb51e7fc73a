package io.sparkkinesis.payload.registry

import java.util.Locale

import scala.util.control.NonFatal

import org.apache.avro.Schema
import org.apache.spark.sql.types.{DataType, StructField, StructType}

import io.sparkkinesis.payload.avro.{AvroConversionException, AvroDecoder, AvroEncoder, AvroTypes}
import io.sparkkinesis.errors.KinesisErrors
import io.sparkkinesis.payload.protobuf.{
  ProtoSchema,
  ProtobufConversionException,
  ProtobufDecoder,
  ProtobufEncoder,
  ProtobufTypes
}
import io.sparkkinesis.payload.jsonschema.{
  JsonSchemaConversionException,
  JsonSchemaUnsupported,
  JsonSchemaDecoder,
  JsonSchemaEncoder,
  JsonSchemaTypes
}

/** Decodes payloads of one writer schema into Catalyst values of the reader's type; one per task (not thread-safe). */
private[sparkkinesis] trait PayloadDecoder {
  def decode(bytes: Array[Byte], offset: Int, length: Int): Any
}

/** Encodes Catalyst values of one type into payload bodies of one schema; one per task (not thread-safe). */
private[sparkkinesis] trait PayloadEncoder {
  def encode(value: Any): Array[Byte]
}

/**
 * One of the Glue Schema Registry's data formats (its `DataFormat`: AVRO, JSON, PROTOBUF), as the schema registry
 * functions use it: the Spark type a schema's values decode to, and the decoders and encoders of its payload bodies.
 * Schema problems found on the driver become [KINESIS_INVALID_SCHEMA] naming `what` (the schema options).
 */
private[sparkkinesis] sealed abstract class PayloadFormat(val name: String) extends Serializable {

  /** The Spark type of values of `definition`: always a struct (other types are the one field `value` of one). */
  def decodedType(definition: String, settings: RegistrySettings, what: String): StructType =
    valueType(definition, settings, what) match {
      case s: StructType => s
      case other => StructType(Seq(StructField("value", other, nullable = true)))
    }

  /** Whether values of `definition` are wrapped into a struct by [[decodedType]]. */
  def wrapped(definition: String, settings: RegistrySettings, what: String): Boolean =
    !valueType(definition, settings, what).isInstanceOf[StructType]

  /** The Spark type of values of `definition`, or [KINESIS_INVALID_SCHEMA]. */
  def valueType(definition: String, settings: RegistrySettings, what: String): DataType

  /** A decoder of payloads written with `writer` into values of `reader`'s type. */
  def decoder(writer: String, reader: String, settings: RegistrySettings): PayloadDecoder

  /** An encoder of values of `valueType` with `definition`; [KINESIS_INVALID_SCHEMA] when they do not fit it. */
  def encoder(valueType: DataType, definition: String, settings: RegistrySettings, what: String): PayloadEncoder
}

private[sparkkinesis] object PayloadFormat {

  /** Avro: the binary datum of the writer schema, resolved to the reader schema by Avro's rules. */
  case object Avro extends PayloadFormat("AVRO") {
    def valueType(definition: String, settings: RegistrySettings, what: String): DataType =
      try AvroTypes.sparkType(parse(definition, what))
      catch { case e: AvroConversionException => throw unfit(what, e.getMessage) }

    def decoder(writer: String, reader: String, settings: RegistrySettings): PayloadDecoder = {
      val d = new AvroDecoder(new Schema.Parser().parse(writer), new Schema.Parser().parse(reader))
      (bytes, offset, length) => d.decode(bytes, offset, length)
    }

    def encoder(valueType: DataType, definition: String, settings: RegistrySettings, what: String): PayloadEncoder =
      try {
        val e = new AvroEncoder(valueType, parse(definition, what))
        value => e.encode(value)
      } catch { case e: AvroConversionException => throw misfit(what, valueType, e.getMessage) }

    private def parse(definition: String, what: String): Schema =
      try new Schema.Parser().parse(definition)
      catch {
        case NonFatal(e) =>
          val why = String.valueOf(e.getMessage).linesIterator.toSeq.headOption.getOrElse("").take(300)
          throw KinesisErrors.invalidSchema(what, s"it is not a valid Avro schema ($why)",
            "Give an Avro schema in JSON, such as {\"type\": \"record\", \"name\": \"Order\", \"fields\": [...]}")
      }
  }

  /**
   * JSON: the body is UTF-8 JSON text, and the schema a JSON Schema document. JSON carries its own field names, so
   * the writer version only says the payload is JSON: each is read straight into the reader schema's shape (unknown
   * properties skipped, missing ones null). Encoding checks every value against the schema's keywords, as AWS's
   * serializer validates before it writes; a keyword it cannot enforce refuses the schema by name.
   */
  case object Json extends PayloadFormat("JSON") {
    def valueType(definition: String, settings: RegistrySettings, what: String): DataType =
      try JsonSchemaTypes.sparkType(definition)
      catch { case e: JsonSchemaConversionException => throw unfit(what, e.getMessage) }

    def decoder(writer: String, reader: String, settings: RegistrySettings): PayloadDecoder = {
      val d = new JsonSchemaDecoder(reader)
      (bytes, offset, length) => d.decode(bytes, offset, length)
    }

    def encoder(valueType: DataType, definition: String, settings: RegistrySettings, what: String): PayloadEncoder =
      try {
        val e = new JsonSchemaEncoder(valueType, definition)
        value => e.encode(value)
      } catch {
        // A keyword the encoder cannot enforce: refused by name, with what to do, rather than skipped.
        case e: JsonSchemaUnsupported => throw KinesisErrors.invalidSchema(what, e.problem, e.fix)
        case e: JsonSchemaConversionException => throw misfit(what, valueType, e.getMessage)
      }
  }

  /**
   * Protobuf: the schema is `.proto` text; the body is the index of the writer's message (among the file's messages
   * sorted by full name), then the message. Fields are matched by number, so versions that add or drop fields read
   * as the reader's message. Values are one message of the file: `protobufMessageName`, or the file's one top-level
   * message.
   */
  case object Protobuf extends PayloadFormat("PROTOBUF") {
    def valueType(definition: String, settings: RegistrySettings, what: String): DataType =
      guarded(what) {
        val schema = ProtoSchema.parse(definition)
        ProtobufTypes.sparkType(schema, messageOf(schema, settings, what))
      }

    def decoder(writer: String, reader: String, settings: RegistrySettings): PayloadDecoder = {
      val readerSchema = ProtoSchema.parse(reader)
      val d = new ProtobufDecoder(ProtoSchema.parse(writer), readerSchema,
        messageOf(readerSchema, settings, settings.schemaText))
      (bytes, offset, length) => d.decode(bytes, offset, length)
    }

    def encoder(valueType: DataType, definition: String, settings: RegistrySettings, what: String): PayloadEncoder = {
      val schema = guarded(what)(ProtoSchema.parse(definition))
      val message = messageOf(schema, settings, what)
      try {
        val e = new ProtobufEncoder(valueType, schema, message)
        value => e.encode(value)
      } catch { case e: ProtobufConversionException => throw misfit(what, valueType, e.getMessage) }
    }

    /** The full name of the message values are: the option's, else the file's only top-level message. */
    private def messageOf(schema: ProtoSchema, settings: RegistrySettings, what: String): String =
      settings.protobufMessage match {
        case Some(named) => guarded(what)(schema.message(named).fullName)
        case None =>
          val prefix = if (schema.packageName.isEmpty) "" else schema.packageName + "."
          schema.messages.map(_.fullName).filter(n =>
            n.startsWith(prefix) && !n.drop(prefix.length).contains('.')) match {
            case Seq(only) => only
            case several => throw KinesisErrors.invalidSchema(what,
                s"its .proto has ${several.size} top-level messages (${several.mkString(", ")})",
                "Set 'protobufMessageName' to the one the payloads are")
          }
      }

    private def guarded[T](what: String)(f: => T): T =
      try f
      catch { case e: ProtobufConversionException => throw unfit(what, e.getMessage) }
  }

  val all: Seq[PayloadFormat] = Seq(Avro, Json, Protobuf)

  /** The format a schema version or the option `dataFormat` names (any case). */
  def named(name: String, what: String): PayloadFormat = {
    val upper = name.toUpperCase(Locale.ROOT)
    all.find(_.name == upper).getOrElse(throw KinesisErrors.invalidSchema(what, s"its data format is $upper",
        s"This release of spark-kinesis decodes and encodes ${all.map(_.name).mkString(", ")} payloads " +
          "(docs/schema-registry.md)"))
  }

  private def unfit(what: String, why: String) =
    KinesisErrors.invalidSchema(what, why, "See docs/schema-registry.md for the types Spark can hold")

  private def misfit(what: String, valueType: DataType, why: String) =
    KinesisErrors.invalidSchema(what, s"values of type ${valueType.simpleString} do not fit it: $why",
      "Cast or rename the struct's fields to the schema's, or give a schema that fits them")
}
