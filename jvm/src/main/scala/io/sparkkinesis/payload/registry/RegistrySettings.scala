package io.sparkkinesis.payload.registry

import java.time.Duration

import io.sparkkinesis.aws.{AwsConnection, SchemaId}
import io.sparkkinesis.compat.ScalaCompat._
import io.sparkkinesis.config.{KinesisOptions, ParsedOptions, Scope}
import io.sparkkinesis.errors.KinesisErrors

/**
 * The options of one call of `from_glue_schema_registry` or `to_glue_schema_registry`, checked against the options
 * registry ([[Scope.SchemaRegistry]], plus the connection's region and credentials options). `toString` shows no
 * credentials: it is what plans print.
 */
private[sparkkinesis] final case class RegistrySettings(
    connection: AwsConnection,
    schema: Option[SchemaId],
    versionNumber: Option[Long],
    definition: Option[String],
    dataFormat: Option[String],
    protobufMessage: Option[String],
    framed: Boolean,
    permissive: Boolean,
    errorField: String,
    compress: Boolean,
    autoRegistration: Boolean,
    cacheSize: Int,
    cacheTtl: Duration,
    maxDecompressedSize: Long) {

  /** What the schema options name, for errors: the registered schema and version, or the definition given. */
  def schemaText: String = schema match {
    case Some(s) => s"$s, version ${versionNumber.fold("latest")(_.toString)}"
    case None => "the schema of 'schemaDefinition'"
  }

  override def toString: String =
    s"RegistrySettings(${schema.fold("schemaDefinition")(_.toString)}, framing=${if (framed) "glue" else "none"}, " +
      s"connection=$connection)"
}

private[sparkkinesis] object RegistrySettings {

  def parse(options: Map[String, String]): RegistrySettings = {
    val opts = ParsedOptions(options, Scope.SchemaRegistry)
    import KinesisOptions._
    val version = opts.getOrDefault(SchemaVersionNumber).toLowerCase(java.util.Locale.ROOT) match {
      case "latest" => None
      case n => Some(n.toLongOption.filter(_ >= 1).getOrElse(throw KinesisErrors.invalidOptionValue(
              SchemaVersionNumber.name, n, "a version number from 1, or latest")))
    }
    val schema = opts.get(SchemaName).map(SchemaId(opts.getOrDefault(RegistryName), _))
    val definition = opts.get(SchemaDefinition)
    if (schema.isEmpty && definition.isEmpty)
      throw KinesisErrors.missingOption(s"${SchemaName.name}' or '${SchemaDefinition.name}",
        "schemaName=orders (with registryName), or schemaDefinition={\"type\": \"record\", ...}")
    if (schema.isEmpty && opts.contains(SchemaVersionNumber))
      throw KinesisErrors.conflictingOptions(s"Option '${SchemaVersionNumber.name}' names a version of " +
        s"'${SchemaName.name}'; set '${SchemaName.name}' too, or remove it.")
    if (schema.isDefined && definition.isDefined && opts.contains(SchemaVersionNumber))
      throw KinesisErrors.conflictingOptions(
        s"Options '${SchemaVersionNumber.name}' and '${SchemaDefinition.name}' both choose the version of " +
          s"'${SchemaName.name}'; keep one.")
    RegistrySettings(
      connection = AwsConnection.forRegistry(opts),
      schema = schema,
      versionNumber = version,
      definition = definition,
      dataFormat = opts.get(DataFormat),
      protobufMessage = opts.get(ProtobufMessageName),
      framed = opts.getOrDefault(Framing) == "glue",
      permissive = opts.getOrDefault(DecodeMode) == "permissive",
      errorField = opts.getOrDefault(ErrorField),
      compress = opts.getOrDefault(Compression) == "zlib",
      autoRegistration = opts.getOrDefault(AutoRegistration),
      cacheSize = opts.getOrDefault(SchemaCacheSize),
      cacheTtl = opts.getOrDefault(SchemaCacheTtl),
      maxDecompressedSize = opts.getOrDefault(MaxDecompressedSize))
  }
}
