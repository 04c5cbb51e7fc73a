package io.sparkkinesis.aws

import java.io.File
import java.net.InetSocketAddress
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.Files
import java.util.UUID
import java.util.zip.GZIPInputStream

import scala.collection.mutable
import scala.sys.process.Process

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import com.fasterxml.jackson.databind.node.{JsonNodeFactory, ObjectNode}
import com.sun.net.httpserver.HttpServer
import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.compat.CollectionConverters._
import io.sparkkinesis.testing.LocalKinesisServer

/**
 * Issue 51: the hand-written Glue Schema Registry client ([[GlueRegistryClient]], kept because the SDK's Glue module
 * would break the jar's size budget) against AWS's own service model of Glue, as botocore ships it in the dev venv
 * (`botocore/data/glue/2017-03-31/service-2.json.gz`). The client talks to a local server that records each request
 * and answers with every member of the operation's output shape; its answers are parsed into nodes that record which
 * fields the client reads. Every operation must be one of the model's, every field it sends a member of the input
 * shape (nested structures too, of the member's type, the required ones all there), and every field it reads from an
 * answer a member of that operation's output shape: reading CreateSchema's answer with RegisterSchemaVersion's field
 * names (`Status`, `VersionNumber`) fails here.
 */
class GlueModelSuite extends AnyFunSuite {

  private val model: JsonNode = {
    val dir = Process(Seq(LocalKinesisServer.pythonExecutable, "-c",
        "import botocore, os; print(os.path.join(os.path.dirname(botocore.__file__), 'data', 'glue', '2017-03-31'))"))
      .!!.trim
    val gz = new File(dir, "service-2.json.gz")
    val bytes =
      if (gz.isFile) {
        val in = new GZIPInputStream(Files.newInputStream(gz.toPath))
        try in.readAllBytes()
        finally in.close()
      } else Files.readAllBytes(new File(dir, "service-2.json").toPath)
    new ObjectMapper().readTree(new String(bytes, UTF_8))
  }
  private val shapes = model.path("shapes")

  private def shapeOf(operation: String, side: String): String = {
    val op = model.path("operations").get(operation)
    assert(op != null, s"$operation is not an operation of Glue's model")
    op.path(side).path("shape").asText()
  }

  /** Where `node` does not fit `shapeName`: unknown members, missing required ones, scalars of the wrong type. */
  private def misfits(node: JsonNode, shapeName: String, where: String): Seq[String] = {
    val shape = shapes.path(shapeName)
    shape.path("type").asText() match {
      case "structure" =>
        val sent = node.fieldNames().asScala.toSeq
        val missing = shape.path("required").elements().asScala.map(_.asText()).filterNot(sent.contains)
          .map(r => s"$where: required member $r of $shapeName not sent").toSeq
        missing ++ sent.flatMap { f =>
          Option(shape.path("members").get(f)) match {
            case None => Seq(s"$where.$f: not a member of $shapeName")
            case Some(m) => misfits(node.get(f), m.path("shape").asText(), s"$where.$f")
          }
        }
      case "list" =>
        node.elements().asScala.toSeq.flatMap(misfits(_, shape.path("member").path("shape").asText(), where))
      case "string" if !node.isTextual => Seq(s"$where: not a string ($shapeName)")
      case "long" | "integer" if !node.isIntegralNumber => Seq(s"$where: not an integer ($shapeName)")
      case "boolean" if !node.isBoolean => Seq(s"$where: not a boolean ($shapeName)")
      case _ => Nil
    }
  }

  private val json = new ObjectMapper()
  private val versionId = UUID.randomUUID()

  /** An answer with every member of `operation`'s output shape, each a value of its type. */
  private def fullAnswer(operation: String): String = {
    val answer = json.createObjectNode()
    shapes.path(shapeOf(operation, "output")).path("members").fields().asScala.foreach { e =>
      val name = e.getKey
      shapes.path(e.getValue.path("shape").asText()).path("type").asText() match {
        case "string" if name.endsWith("VersionId") => answer.put(name, versionId.toString)
        case "string" if name.endsWith("Status") => answer.put(name, "AVAILABLE")
        case "string" if name == "DataFormat" => answer.put(name, "AVRO")
        case "string" => answer.put(name, "\"string\"")
        case "long" | "integer" => answer.put(name, 3)
        case "boolean" => answer.put(name, true)
        case "list" => answer.putArray(name)
        case "structure" | "map" => answer.putObject(name)
        case _ => answer.put(name, 1700000000)
      }
    }
    json.writeValueAsString(answer)
  }

  /** Field names read from the answers the client parsed, top level (the client reads no nested field). */
  private val reads = mutable.Buffer.empty[String]
  private val errorFields = Set("__type", "Message", "message")

  private final class Recording(f: JsonNodeFactory) extends ObjectNode(f) {
    override def path(field: String): JsonNode = { reads.synchronized(reads += field); super.path(field) }
    override def get(field: String): JsonNode = { reads.synchronized(reads += field); super.get(field) }
  }
  private val recordingMapper = new ObjectMapper().setNodeFactory(new JsonNodeFactory(false) {
    override def objectNode(): ObjectNode = new Recording(this)
  })

  /** What the local Glue saw: (operation, request body, status answered). */
  private final case class Seen(operation: String, request: JsonNode, status: Int)

  /**
   * Runs `call` on a client of a local Glue that answers `failing` operations with EntityNotFoundException and the
   * others with their full answer; checks each request and the fields read against the model.
   */
  private def check(failing: Set[String] = Set.empty)(call: GlueRegistryClient => Unit): Seq[Seen] = {
    val seen = mutable.Buffer.empty[Seen]
    val server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0)
    server.createContext("/",
      exchange => {
        val operation = exchange.getRequestHeaders.getFirst("X-Amz-Target").stripPrefix("AWSGlue.")
        val request = json.readTree(new String(exchange.getRequestBody.readAllBytes(), UTF_8))
        val (status, body) =
          if (failing(operation)) (400, """{"__type":"EntityNotFoundException","Message":"none"}""")
          else (200, fullAnswer(operation))
        seen.synchronized(seen += Seen(operation, request, status))
        val bytes = body.getBytes(UTF_8)
        exchange.getResponseHeaders.add("Content-Type", "application/x-amz-json-1.1")
        exchange.sendResponseHeaders(status, bytes.length.toLong)
        exchange.getResponseBody.write(bytes)
        exchange.close()
      })
    server.start()
    val c = AwsConnection("us-east-1", Some(s"http://127.0.0.1:${server.getAddress.getPort}"),
      CredentialsConfig.StaticKeys("AKIDGLUEMODEL", "glue-model-secret", None), cborEnabled = false)
    val post = SignedPost(c, EndpointVariants.Service.Glue)
    reads.synchronized(reads.clear())
    try call(new GlueRegistryClient(c, post, RetryPolicy.Default.on(c), recordingMapper))
    finally {
      post.close()
      server.stop(0)
    }
    val requests = seen.synchronized(seen.toList)
    assert(requests.nonEmpty)
    requests.foreach { s =>
      val problems = misfits(s.request, shapeOf(s.operation, "input"), s.operation)
      assert(problems.isEmpty, problems.mkString("\n"))
    }
    val answered = requests.filter(_.status == 200).map(_.operation).distinct
    assert(answered.size == 1, requests)
    val output = shapes.path(shapeOf(answered.head, "output")).path("members")
    val read = reads.synchronized(reads.toList).filterNot(errorFields).distinct
    assert(read.nonEmpty)
    val unknown = read.filterNot(output.has)
    assert(unknown.isEmpty, s"${answered.head}'s answer read with fields its output shape lacks: $unknown")
    requests
  }

  private val schema = SchemaId("shop", "orders")

  test("GetSchemaVersion by version id, by number and the latest: requests and answers as the model names them") {
    check()(c => assert(c.schemaVersion(versionId).id == versionId))
    check()(c => assert(c.schemaVersion(schema, Some(3L)).versionNumber == 3L))
    val latest = check()(c => c.schemaVersion(schema, None))
    assert(latest.map(_.request.path("SchemaVersionNumber").path("LatestVersion").asBoolean()) == Seq(true))
  }

  test("GetSchemaByDefinition: request and answer as the model names them") {
    check()(c => assert(c.versionOf(schema, "\"string\"").map(_.id).contains(versionId)))
  }

  test("RegisterSchemaVersion, and CreateSchema when the schema does not exist: each answer read by its own fields") {
    val registered = check()(c => assert(c.register(schema, "AVRO", "\"string\"").versionNumber == 3L))
    assert(registered.map(_.operation) == Seq("RegisterSchemaVersion"))
    val created = check(failing = Set("RegisterSchemaVersion"))(c =>
      assert(c.register(schema, "AVRO", "\"string\"").versionNumber == 1L))
    assert(created.map(s => s.operation -> s.status) == Seq("RegisterSchemaVersion" -> 400, "CreateSchema" -> 200))
  }
}
