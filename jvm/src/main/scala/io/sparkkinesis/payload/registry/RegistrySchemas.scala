package io.sparkkinesis.payload.registry

import java.util.UUID

import io.sparkkinesis.aws.{GlueRegistryClient, SchemaVersion}
import io.sparkkinesis.errors.KinesisErrors

/**
 * The schemas of a call of the schema registry functions, found on the driver when the query is analyzed, so that
 * every task uses the same ones: the reader schema a decode gives every record the shape of, and the schema (with
 * its version id) an encode writes with, each with its data format. A registered schema named with `latest` is
 * looked up once, here.
 */
private[sparkkinesis] object RegistrySchemas {

  /** A schema's definition and data format; `id`, the registered version's, when it is one. */
  final case class Found(definition: String, format: PayloadFormat, id: Option[UUID])

  /** The reader schema: `schemaDefinition`, else the version of `schemaName` the options name. */
  def reader(settings: RegistrySettings): Found = settings.definition match {
    case Some(d) => Found(d, optionFormat(settings), None)
    case None =>
      val v = GlueRegistryClient(settings.connection).schemaVersion(settings.schema.get, settings.versionNumber)
      Found(v.definition, PayloadFormat.named(v.dataFormat, settings.schemaText), Some(v.id))
  }

  /**
   * The schema an encode writes with, with its version id when payloads are framed. A definition given with
   * `schemaName` is looked up among that schema's versions and, with `autoRegistration`, registered when it is not
   * one.
   */
  def writer(settings: RegistrySettings): Found = (settings.definition, settings.schema) match {
    case (Some(d), None) =>
      if (settings.framed) throw KinesisErrors.invalidSchema(settings.schemaText,
        "a framed payload carries the id of a registered schema version, and 'schemaDefinition' alone names none",
        "Set 'schemaName' (and 'registryName') to the schema it is a version of, or framing=none for plain payloads")
      Found(d, optionFormat(settings), None)
    case (Some(d), Some(id)) =>
      val format = optionFormat(settings)
      val client = GlueRegistryClient(settings.connection)
      val version = client.versionOf(id, d).getOrElse {
        if (!settings.autoRegistration) throw KinesisErrors.invalidSchema(s"The 'schemaDefinition' given for $id",
          "it is no version of that schema",
          "Register it (aws glue register-schema-version), or set autoRegistration=true to have it registered")
        client.register(id, format.name, d)
      }
      Found(d, format,
        Some(available(version, s"The 'schemaDefinition' given for $id", client.schemaVersion(_),
            Thread.sleep(_)).id))
    case (None, Some(id)) =>
      val v = GlueRegistryClient(settings.connection).schemaVersion(id, settings.versionNumber)
      Found(v.definition, PayloadFormat.named(v.dataFormat, settings.schemaText), Some(v.id))
    case (None, None) => throw new IllegalStateException("RegistrySettings.parse requires a schema")
  }

  /** How many times, a second apart, a new version is looked at before it must be AVAILABLE. */
  val AvailableChecks = 30

  /**
   * `version`, once the registry has made it AVAILABLE: a version just registered is PENDING while the registry
   * checks its compatibility (as AWS's serializers do, it is looked at again, a second apart, up to
   * [[AvailableChecks]] times); FAILURE (incompatible with the versions before it), DELETING or still PENDING is
   * [KINESIS_INVALID_SCHEMA] naming `what`, since records framed with it could not be read.
   */
  def available(
      version: SchemaVersion,
      what: String,
      refetch: UUID => SchemaVersion,
      sleep: Long => Unit): SchemaVersion = {
    var current = version
    var checks = 0
    while (current.status.equalsIgnoreCase("PENDING") && checks < AvailableChecks) {
      sleep(1000)
      checks += 1
      current = refetch(current.id)
    }
    if (current.status.isEmpty || current.status.equalsIgnoreCase("AVAILABLE")) current
    else throw KinesisErrors.invalidSchema(what,
      s"its registered version ${current.id} is ${current.status}" +
        (if (current.status.equalsIgnoreCase("FAILURE")) " (the registry found it incompatible with the versions " +
           "before it, under the schema's compatibility mode)"
         else ""),
      "Give a definition the schema's compatibility mode accepts, or change the mode (aws glue update-schema)")
  }

  /** The format of a definition given in the options: `dataFormat`, Avro unless told. */
  private def optionFormat(settings: RegistrySettings): PayloadFormat =
    PayloadFormat.named(settings.dataFormat.getOrElse(PayloadFormat.Avro.name), settings.schemaText)
}
