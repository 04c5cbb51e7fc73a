package io.sparkkinesis.testing

import java.io.File
import java.net.{HttpURLConnection, ServerSocket, URI}
import java.nio.charset.StandardCharsets.UTF_8

import scala.util.Try

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import org.scalatest.{BeforeAndAfterAll, Suite}

import io.sparkkinesis.compat.CollectionConverters._

/**
 * moto's server (AWS's STS among others) on a free loopback port, from the project's dev venv (`make venv`, as
 * the Python suites use it through tests/harness/moto.py), stopped by its own process handle after the suite.
 */
trait MotoServer extends BeforeAndAfterAll { this: Suite =>

  private var process: Option[Process] = None
  private var adapter: Option[Process] = None

  /** The endpoint URL of moto, started on first use. */
  protected lazy val moto: String = {
    val port = {
      val s = new ServerSocket(0);
      try s.getLocalPort
      finally s.close()
    }
    val python = new File(LocalKinesisServer.pythonExecutable)
    val server = Option(python.getParentFile).map(new File(_, "moto_server")).filter(_.isFile)
      .getOrElse(new File(".venv/bin/moto_server"))
    val log = new File(s"target/moto-${ProcessHandle.current().pid()}-$port.log")
    log.getParentFile.mkdirs()
    val started = new ProcessBuilder(server.getPath, "-H", "127.0.0.1", "-p", port.toString)
      .redirectErrorStream(true).redirectOutput(log).start()
    process = Some(started)
    val endpoint = s"http://127.0.0.1:$port"
    val deadline = System.nanoTime() + 60L * 1000000000L
    while (Try(get(s"$endpoint/moto-api/data.json")).isFailure) {
      if (!started.isAlive || System.nanoTime() > deadline)
        throw new IllegalStateException(s"moto_server did not start on $endpoint (see $log)")
      Thread.sleep(100)
    }
    endpoint
  }

  /**
   * The endpoint URL of CloudWatch as the SDK speaks to it (Smithy RPC v2 CBOR) in front of [[moto]]'s, which serves
   * only the Query and JSON protocols (tests/harness/cloudwatch_cbor.py), started on first use.
   */
  protected lazy val cloudWatch: String = {
    val upstream = moto
    val port = {
      val s = new ServerSocket(0);
      try s.getLocalPort
      finally s.close()
    }
    val log = new File(s"target/cloudwatch-cbor-${ProcessHandle.current().pid()}-$port.log")
    val started = new ProcessBuilder(LocalKinesisServer.pythonExecutable, "tests/harness/cloudwatch_cbor.py", upstream,
      port.toString).redirectErrorStream(true).redirectOutput(log).start()
    adapter = Some(started)
    val endpoint = s"http://127.0.0.1:$port"
    val deadline = System.nanoTime() + 30L * 1000000000L
    while (Try(new java.net.Socket("127.0.0.1", port).close()).isFailure) {
      if (!started.isAlive || System.nanoTime() > deadline)
        throw new IllegalStateException(s"tests/harness/cloudwatch_cbor.py did not start on $endpoint (see $log)")
      Thread.sleep(100)
    }
    endpoint
  }

  /** The roles moto's STS handed out credentials for: (role ARN, session name, external id, access key id). */
  protected def assumedRoles: Seq[(String, String, Option[String], String)] = {
    val roles = new ObjectMapper().readTree(get(s"$moto/moto-api/data.json")).path("sts").path("AssumedRole")
    roles.elements().asScala.toList.map { r: JsonNode =>
      (r.path("role_arn").asText(), r.path("session_name").asText(),
        Option(r.get("external_id")).filterNot(_.isNull).map(_.asText()), r.path("access_key_id").asText())
    }
  }

  private def get(url: String): String = {
    val c = URI.create(url).toURL.openConnection().asInstanceOf[HttpURLConnection]
    c.setConnectTimeout(2000)
    c.setReadTimeout(10000)
    try new String(c.getInputStream.readAllBytes(), UTF_8)
    finally c.disconnect()
  }

  override protected def afterAll(): Unit =
    try super.afterAll()
    finally (adapter.toSeq ++ process).foreach { p =>
        p.destroy()
        if (!p.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)) p.destroyForcibly().waitFor()
      }
}
