package io.sparkkinesis.registry

import java.util.{Locale, UUID}

import scala.util.control.NonFatal

import org.apache.avro.Schema
import org.apache.spark.sql.types.{DataType, StructField, StructType}

import io.sparkkinesis.aws.GlueRegistryClient
import io.sparkkinesis.errors.KinesisErrors
import io.sparkkinesis.avro.{AvroConversionException, AvroTypes}

/**
 * The schemas of a call of the schema registry functions, found on the driver when the query is analyzed, so that
 * every task uses the same ones: the reader schema a decode gives every record the shape of, and the schema (with
 * its version id) an encode writes with. A registered schema named with `latest` is looked up once, here.
 */
private[sparkkinesis] object RegistrySchemas {

  /** The one format this release decodes and encodes. */
  val Avro = "AVRO"

  /** The reader schema's definition (Avro schema JSON), checked. */
  def readerDefinition(settings: RegistrySettings): String = settings.definition match {
    case Some(d) =>
      checkFormat(settings.dataFormat.getOrElse("avro"), settings.schemaText)
      d
    case None =>
      val v = GlueRegistryClient(settings.connection).schemaVersion(settings.schema.get, settings.versionNumber)
      checkFormat(v.dataFormat, settings.schemaText)
      v.definition
  }

  /**
   * The schema an encode writes with: its definition, and its version id when payloads are framed. A definition
   * given with `schemaName` is looked up among that schema's versions and, with `autoRegistration`, registered when
   * it is not one.
   */
  def writer(settings: RegistrySettings): (String, Option[UUID]) = (settings.definition, settings.schema) match {
    case (Some(d), None) =>
      checkFormat(settings.dataFormat.getOrElse("avro"), settings.schemaText)
      if (settings.framed) throw KinesisErrors.invalidSchema(settings.schemaText,
        "a framed payload carries the id of a registered schema version, and 'schemaDefinition' alone names none",
        "Set 'schemaName' (and 'registryName') to the schema it is a version of, or framing=none for plain payloads")
      (d, None)
    case (Some(d), Some(id)) =>
      checkFormat(settings.dataFormat.getOrElse("avro"), settings.schemaText)
      val client = GlueRegistryClient(settings.connection)
      val version = client.versionOf(id, d).getOrElse {
        if (!settings.autoRegistration) throw KinesisErrors.invalidSchema(s"The 'schemaDefinition' given for $id",
          "it is no version of that schema",
          "Register it (aws glue register-schema-version), or set autoRegistration=true to have it registered")
        client.register(id, Avro, d)
      }
      (d, Some(version.id))
    case (None, Some(id)) =>
      val v = GlueRegistryClient(settings.connection).schemaVersion(id, settings.versionNumber)
      checkFormat(v.dataFormat, settings.schemaText)
      (v.definition, Some(v.id))
    case (None, None) => throw new IllegalStateException("RegistrySettings.parse requires a schema")
  }

  /** `definition` parsed as an Avro schema, or [KINESIS_INVALID_SCHEMA] naming `what`. */
  def parse(definition: String, what: String): Schema =
    try new Schema.Parser().parse(definition)
    catch {
      case NonFatal(e) => throw KinesisErrors.invalidSchema(what, s"it is not a valid Avro schema (${e.getMessage})",
          "Give an Avro schema in JSON, such as {\"type\": \"record\", \"name\": \"Order\", \"fields\": [...]}")
    }

  /** The Spark type `schema` decodes to: its record's struct, or a struct of one field `value` for other types. */
  def decodedType(schema: Schema, what: String): StructType =
    sparkType(schema, what) match {
      case s: StructType => s
      case other => StructType(Seq(StructField("value", other, AvroTypes.nullable(schema))))
    }

  /** The Spark type of `schema`, or [KINESIS_INVALID_SCHEMA] naming `what` and why. */
  def sparkType(schema: Schema, what: String): DataType =
    try AvroTypes.sparkType(schema)
    catch {
      case e: AvroConversionException => throw KinesisErrors.invalidSchema(what, e.getMessage,
          "See docs/schema-registry.md for the Avro types Spark can hold")
    }

  private def checkFormat(format: String, what: String): Unit =
    if (format.toUpperCase(Locale.ROOT) != Avro)
      throw KinesisErrors.invalidSchema(what, s"its data format is ${format.toUpperCase(Locale.ROOT)}",
        "This release of spark-kinesis decodes and encodes AVRO payloads; JSON and PROTOBUF are planned " +
          "(docs/schema-registry.md)")
}
