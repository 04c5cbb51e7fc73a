package io.sparkkinesis.aws

import java.io.InputStream
import java.nio.charset.StandardCharsets.UTF_8
import java.util.UUID

import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import com.fasterxml.jackson.databind.node.ObjectNode
import software.amazon.awssdk.awscore.exception.{AwsErrorDetails, AwsServiceException}
import software.amazon.awssdk.core.exception.SdkClientException

import io.sparkkinesis.errors.KinesisErrors

/** One version of a registered schema, as the Glue Schema Registry describes it. */
private[sparkkinesis] final case class SchemaVersion(
    id: UUID,
    definition: String,
    dataFormat: String,
    versionNumber: Long,
    status: String)

/** Which registered schema: a registry and a schema name in it. */
private[sparkkinesis] final case class SchemaId(registry: String, schema: String) {
  override def toString: String = s"schema '$schema' of registry '$registry'"
}

/**
 * The few AWS Glue Schema Registry calls the schema registry functions make, sent as the Glue JSON API's requests
 * (a [[SignedPost]] to the service `glue`), with the connector's retry policy. The SDK's Glue
 * client would do the same, but it is a 10 MB jar for the whole of Glue, which every artifact of the connector would
 * carry for these four calls (docs/schema-registry.md, "Dependencies"). Errors the service answers come back as
 * [[AwsServiceException]]s with its error code and status, so [[Failure]] classifies them as it does Kinesis's;
 * those retrying cannot fix end as [KINESIS_SCHEMA_REGISTRY_ERROR]. The operation and field names are checked
 * against AWS's own service model for Glue (`GlueModelSuite`); `json` parses the answers (that suite's records which
 * fields the client reads).
 */
private[sparkkinesis] final class GlueRegistryClient(
    connection: AwsConnection,
    post: SignedPost,
    policy: RetryPolicy,
    json: ObjectMapper = new ObjectMapper()) {

  /** The version of `id`: the schema a framed record was written with. */
  def schemaVersion(id: UUID): SchemaVersion =
    version(answer("GetSchemaVersion", s"schema version id $id", obj().put("SchemaVersionId", id.toString),
        notFoundIsAnswer = false, recordVersionId = Some(id.toString)).get)

  /** Version `number` of `schema`, the latest when None. */
  def schemaVersion(schema: SchemaId, number: Option[Long]): SchemaVersion = {
    val request = obj()
    request.set[JsonNode]("SchemaId", schemaId(schema))
    val n = request.putObject("SchemaVersionNumber")
    number match {
      case Some(v) => n.put("VersionNumber", v)
      case None => n.put("LatestVersion", true)
    }
    version(call("GetSchemaVersion", s"$schema, version ${number.fold("latest")(_.toString)}", request))
  }

  /** The version id of `schema` whose definition is `definition`, None when it has none. */
  def versionOf(schema: SchemaId, definition: String): Option[SchemaVersion] = {
    val request = obj().put("SchemaDefinition", definition)
    request.set[JsonNode]("SchemaId", schemaId(schema))
    found("GetSchemaByDefinition", s"a definition of $schema", request).map { r =>
      SchemaVersion(UUID.fromString(r.path("SchemaVersionId").asText()), definition, r.path("DataFormat").asText(), -1,
        r.path("Status").asText())
    }
  }

  /** Registers `definition` as a new version of `schema` (creating the schema when it does not exist). */
  def register(schema: SchemaId, dataFormat: String, definition: String): SchemaVersion = {
    val request = obj().put("SchemaDefinition", definition)
    request.set[JsonNode]("SchemaId", schemaId(schema))
    found("RegisterSchemaVersion", s"a new version of $schema", request) match {
      case Some(answer) => GlueRegistryClient.registeredVersion(answer, definition, dataFormat)
      case None =>
        GlueRegistryClient.createdVersion(call("CreateSchema", s"$schema", create(schema, dataFormat, definition)),
          definition, dataFormat)
    }
  }

  private def obj(): ObjectNode = json.createObjectNode()

  private def create(schema: SchemaId, dataFormat: String, definition: String): ObjectNode = {
    val request = obj().put("SchemaName", schema.schema).put("DataFormat", dataFormat)
      .put("Compatibility", "BACKWARD").put("SchemaDefinition", definition)
    request.putObject("RegistryId").put("RegistryName", schema.registry)
    request
  }

  private def schemaId(s: SchemaId): ObjectNode = obj().put("RegistryName", s.registry).put("SchemaName", s.schema)

  private def version(r: JsonNode): SchemaVersion =
    SchemaVersion(UUID.fromString(r.path("SchemaVersionId").asText()), r.path("SchemaDefinition").asText(),
      r.path("DataFormat").asText(), r.path("VersionNumber").asLong(), r.path("Status").asText())

  /** Sends `operation` with `request`, retrying what the policy retries; `what` names its subject in errors. */
  private def call(operation: String, what: String, request: ObjectNode): JsonNode =
    answer(operation, what, request, notFoundIsAnswer = false).get

  /** [[call]] for a call whose EntityNotFoundException means "none yet": None then. */
  private def found(operation: String, what: String, request: ObjectNode): Option[JsonNode] =
    answer(operation, what, request, notFoundIsAnswer = true)

  private def answer(
      operation: String,
      what: String,
      request: ObjectNode,
      notFoundIsAnswer: Boolean,
      recordVersionId: Option[String] = None): Option[JsonNode] =
    policy.call(operation, what, what = Some(s"Glue Schema Registry $operation for $what")) {
      val body = json.writeValueAsBytes(request)
      send(operation, body) match {
        case (status, answer) if status / 100 == 2 => Some(answer)
        case (status, answer) =>
          val code = GlueRegistryClient.errorCode(answer)
          val message = Option(answer.path("Message").textValue()).orElse(Option(answer.path("message").textValue()))
            .getOrElse(s"HTTP $status")
          if (code == "EntityNotFoundException" && notFoundIsAnswer) None
          else {
            val error = AwsServiceException.builder().statusCode(status).message(message)
              .awsErrorDetails(AwsErrorDetails.builder().serviceName("Glue").errorCode(code).errorMessage(message)
                  .build()).build()
            val failure = Failure.of(error)
            if (failure.retryable) throw error
            throw KinesisErrors.schemaRegistryError(operation, what, code, message, connection.region,
              failure == Failure.AccessDenied, error, recordVersionId)
          }
      }
    }

  private def send(operation: String, body: Array[Byte]): (Int, JsonNode) =
    post(operation, Seq("Content-Type" -> "application/x-amz-json-1.1", "X-Amz-Target" -> s"AWSGlue.$operation"),
      body)(_.fold(json.createObjectNode(): JsonNode)(GlueRegistryClient.readJson(json, _)))
}

private[sparkkinesis] object GlueRegistryClient {

  private val clients = new ClientCache[AwsConnection, GlueRegistryClient](KinesisClients.MaxClients,
    KinesisClients.CloseDelayMillis, build)

  /** The client of `connection` (its `endpointUrl` the Glue endpoint), one per JVM and connection. */
  def apply(connection: AwsConnection): GlueRegistryClient = clients(connection)

  private def build(c: AwsConnection): ClientCache.Built[GlueRegistryClient] = {
    val post = SignedPost(c, EndpointVariants.Service.Glue)
    ClientCache.Built(new GlueRegistryClient(c, post, RetryPolicy.Default.on(c)), Seq(post))
  }

  private def readJson(json: ObjectMapper, in: InputStream): JsonNode =
    try {
      val bytes = in.readAllBytes()
      if (bytes.isEmpty) json.createObjectNode() else json.readTree(new String(bytes, UTF_8))
    } catch { case NonFatal(e) => throw SdkClientException.builder().message(e.getMessage).cause(e).build() }
    finally in.close()

  /**
   * The version RegisterSchemaVersion's answer describes: its fields `SchemaVersionId`, `VersionNumber` and `Status`
   * (the SDK's service model, RegisterSchemaVersionResponse). Without a status it counts as PENDING, so that the
   * caller looks the version up before using it.
   */
  private[aws] def registeredVersion(answer: JsonNode, definition: String, dataFormat: String): SchemaVersion =
    SchemaVersion(UUID.fromString(answer.path("SchemaVersionId").asText()), definition, dataFormat,
      answer.path("VersionNumber").asLong(1), answer.path("Status").asText("PENDING"))

  /**
   * The first version CreateSchema's answer describes. Its fields differ from RegisterSchemaVersion's (the SDK's
   * service model, CreateSchemaResponse): `SchemaVersionId` and `SchemaVersionStatus`, and no version number (a new
   * schema's first version is 1).
   */
  private[aws] def createdVersion(answer: JsonNode, definition: String, dataFormat: String): SchemaVersion =
    SchemaVersion(UUID.fromString(answer.path("SchemaVersionId").asText()), definition, dataFormat, 1,
      answer.path("SchemaVersionStatus").asText("PENDING"))

  /** The error code of a Glue error answer (`__type`, possibly namespaced `...#Code`). */
  private def errorCode(answer: JsonNode): String = {
    val t = answer.path("__type").asText("")
    if (t.isEmpty) "UnknownError" else t.substring(t.lastIndexOf('#') + 1)
  }
}
