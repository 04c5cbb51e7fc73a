package io.sparkkinesis.aws

import java.net.InetSocketAddress
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.Files
import java.time.Instant
import java.util.concurrent.ConcurrentLinkedQueue

import com.sun.net.httpserver.HttpServer
import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.auth.credentials.AwsSessionCredentials

import io.sparkkinesis.compat.CollectionConverters._

/**
 * Issue 40, item 1: `containerCredentialsUri` against a local HTTP server standing in for the EKS Pod Identity agent:
 * the token file sent as the Authorization header, read again at each refresh; credentials fetched again before they
 * expire; a refusal that names the endpoint and its status, never the token.
 */
class ContainerCredentialsSuite extends AnyFunSuite {

  /** Serves `answers` in turn (status, expiry), logging each request's Authorization header; `body` gets the URI. */
  private def withAgent(answers: Seq[(Int, Instant)])(body: String => Unit): Seq[String] = {
    val seen = new ConcurrentLinkedQueue[String]()
    val server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0)
    server.createContext("/v1/credentials",
      exchange => {
        val n = seen.size
        seen.add(Option(exchange.getRequestHeaders.getFirst("Authorization")).getOrElse("(none)"))
        val (status, expiry) = answers(math.min(n, answers.size - 1))
        val json = s"""{"AccessKeyId":"ASIAPOD$n","SecretAccessKey":"pod-secret-$n","Token":"pod-session-$n",""" +
          s""""AccountId":"123456789012","Expiration":"$expiry"}"""
        val bytes = (if (status == 200) json else """{"message":"unauthorized"}""").getBytes(UTF_8)
        exchange.sendResponseHeaders(status, bytes.length.toLong)
        exchange.getResponseBody.write(bytes)
        exchange.close()
      })
    server.start()
    try body(s"http://127.0.0.1:${server.getAddress.getPort}/v1/credentials")
    finally server.stop(0)
    seen.iterator().asScala.toList
  }

  test("the token file is the Authorization header, read again when credentials are refreshed ahead of expiry") {
    val token = Files.createTempFile("pod-identity", ".token")
    Files.write(token, "first-pod-token\n".getBytes(UTF_8))
    // Past the prefetch time (5 minutes before expiry), stale (1 minute before) in 30 s: refreshed in the background
    // when the SDK's prefetch gets to it, and at the latest by the first call once stale, so within 30 s for certain.
    val soon = Instant.now().plusSeconds(90)
    val later = Instant.now().plusSeconds(3600)
    val seen = withAgent(Seq((200, soon), (200, later))) { uri =>
      val (provider, closeables) =
        CredentialProviders.of(CredentialsConfig.Container(uri, Some(token.toString)), "us-east-1",
          EndpointVariants.Sdk)
      try {
        val first = provider.resolveCredentials().asInstanceOf[AwsSessionCredentials]
        assert(first.accessKeyId() == "ASIAPOD0" && first.sessionToken() == "pod-session-0")
        Files.write(token, "rotated-pod-token".getBytes(UTF_8))
        val deadline = System.nanoTime() + 60L * 1000000000L
        var key = provider.resolveCredentials().accessKeyId()
        while (key != "ASIAPOD1" && System.nanoTime() < deadline) {
          Thread.sleep(20)
          key = provider.resolveCredentials().accessKeyId()
        }
        assert(key == "ASIAPOD1")
        assert(provider.resolveCredentials().accessKeyId() == "ASIAPOD1") // an hour left: cached
      } finally closeables.foreach(_.close())
    }
    assert(seen == Seq("first-pod-token", "rotated-pod-token"))
    Files.delete(token)
  }

  test("a refusal names the endpoint and the status, never the token") {
    val token = Files.createTempFile("pod-identity", ".token")
    Files.write(token, "do-not-show-this-token".getBytes(UTF_8))
    withAgent(Seq((403, Instant.now()))) { uri =>
      val provider = new ContainerCredentials(java.net.URI.create(uri), Some(token.toString))
      try {
        val e = intercept[Exception](provider.resolveCredentials())
        val messages = Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).map(_.getMessage).mkString("\n")
        assert(messages.contains(s"The container credentials endpoint $uri answered HTTP 403"), messages)
        assert(!messages.contains("do-not-show-this-token"), messages)
      } finally provider.close()
    }
    Files.delete(token)
  }

  /** A local agent answering each request with the next of `answers` (status, extra headers), logging the paths and
   * Host headers it saw. */
  private def withScriptedAgent(answers: Seq[(Int, Seq[(String, String)])])(body: String => Unit)
      : Seq[(String, String)] = {
    val seen = new ConcurrentLinkedQueue[(String, String)]()
    val server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0)
    server.createContext("/",
      exchange => {
        val n = seen.size
        seen.add(exchange.getRequestURI.getPath -> exchange.getRequestHeaders.getFirst("Host"))
        val (status, headers) = answers(math.min(n, answers.size - 1))
        headers.foreach { case (k, v) => exchange.getResponseHeaders.add(k, v) }
        val json = s"""{"AccessKeyId":"ASIAPOD$n","SecretAccessKey":"pod-secret-$n","Token":"pod-session-$n",""" +
          s""""Expiration":"${Instant.now().plusSeconds(3600)}"}"""
        val bytes = (if (status == 200) json else "{}").getBytes(UTF_8)
        exchange.sendResponseHeaders(status, bytes.length.toLong)
        exchange.getResponseBody.write(bytes)
        exchange.close()
      })
    server.start()
    try body(s"http://localhost:${server.getAddress.getPort}/v1/credentials")
    finally server.stop(0)
    seen.iterator().asScala.toList
  }

  private def messages(e: Throwable): String =
    Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).map(_.getMessage).mkString("\n")

  test("a 5xx is tried again, as the SDK's provider does, and the request goes to the address that was checked") {
    var port = 0
    val seen = withScriptedAgent(Seq((500, Nil), (503, Nil), (200, Nil))) { uri =>
      port = java.net.URI.create(uri).getPort
      val provider = new ContainerCredentials(java.net.URI.create(uri), None)
      try assert(provider.resolveCredentials().accessKeyId() == "ASIAPOD2")
      finally provider.close()
    }
    assert(seen.map(_._1) == Seq.fill(3)("/v1/credentials"))
    // The URI names localhost; the connection went to the loopback address checked at the fetch, not to a second
    // lookup of the name.
    assert(seen.map(_._2).distinct == Seq(s"127.0.0.1:$port"), seen)
  }

  test("a 5xx that goes on fails after the SDK's number of tries, naming the status") {
    val seen = withScriptedAgent(Seq((500, Nil))) { uri =>
      val provider = new ContainerCredentials(java.net.URI.create(uri), None)
      try {
        val e = intercept[Exception](provider.resolveCredentials())
        assert(messages(e).contains(s"The container credentials endpoint $uri answered HTTP 500 (tried 6 times)"),
          messages(e))
      } finally provider.close()
    }
    assert(seen.size == ContainerCredentials.MaxRetries + 1)
  }

  test("a redirect is not followed, and a 4xx is not tried again") {
    val seen = withScriptedAgent(Seq((302, Seq("Location" -> "/elsewhere")), (200, Nil))) { uri =>
      val provider = new ContainerCredentials(java.net.URI.create(uri), None)
      try assert(messages(intercept[Exception](provider.resolveCredentials())).contains("answered HTTP 302"))
      finally provider.close()
    }
    assert(seen.map(_._1) == Seq("/v1/credentials"), "the Location was never asked")
  }

  test("an http endpoint whose host is not loopback or an agent's is refused at the fetch, before any connection") {
    val provider = new ContainerCredentials(java.net.URI.create("http://10.1.2.3:9/v1/credentials"), None)
    try {
      val e = intercept[Exception](provider.resolveCredentials())
      assert(messages(e).contains("http://10.1.2.3:9/v1/credentials is not allowed now"), messages(e))
    } finally provider.close()
    assert(ContainerCredentials.problem("http://10.1.2.3:9/v1/credentials").isDefined)
    assert(ContainerCredentials.problem("http://127.0.0.1:9/v1/credentials").isEmpty)
  }
}
