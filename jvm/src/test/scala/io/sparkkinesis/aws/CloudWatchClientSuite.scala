package io.sparkkinesis.aws

import java.net.InetSocketAddress
import java.time.Instant
import java.util.concurrent.ConcurrentLinkedQueue
import java.util.concurrent.atomic.AtomicInteger

import com.sun.net.httpserver.HttpServer
import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.services.cloudwatch.model.{DimensionFilter, ListMetricsRequest}

import io.sparkkinesis.compat.CollectionConverters._
import io.sparkkinesis.config.{ParsedOptions, Scope}
import io.sparkkinesis.metrics.{CloudWatchPublisher, CloudWatchSender, CloudWatchSettings, Datum, QueryStats, ReadStats}
import io.sparkkinesis.testing.{Integration, MotoServer}

/**
 * Issue 51: PutMetricData through the SDK's CloudWatch client, built and cached per connection like the Kinesis
 * clients: against moto's CloudWatch at `cloudWatchEndpointUrl` (through tests/harness/cloudwatch_cbor.py: the SDK
 * speaks Smithy RPC v2 CBOR to CloudWatch, moto does not) with the query's credentials, the publisher's last round on
 * stop, and the SDK's retries against a local server that answers 500 first (moto cannot be made to).
 */
@Integration
class CloudWatchClientSuite extends AnyFunSuite with MotoServer {

  private val query = AwsConnection("us-east-1", Some("http://127.0.0.1:1"),
    CredentialsConfig.StaticKeys("AKIDCLOUDWATCHTEST", "cloudwatch-test-secret", None), cborEnabled = false)

  private def settings(endpoint: String, namespace: String): CloudWatchSettings =
    CloudWatchSettings.parse(ParsedOptions(Map("cloudWatchMetrics" -> "true", "cloudWatchEndpointUrl" -> endpoint,
          "cloudWatchNamespace" -> namespace, "cloudWatchDimensions" -> "Environment=test").asJava, Scope.Source),
      query).get

  /** The metric names moto's CloudWatch lists in `namespace` with the dimension StreamName=`stream`. */
  private def listed(connection: AwsConnection, namespace: String, stream: String): Set[String] =
    KinesisClients.cloudWatch(connection).listMetrics(ListMetricsRequest.builder().namespace(namespace)
        .dimensions(DimensionFilter.builder().name("StreamName").value(stream).build()).build())
      .metrics().asScala.map(_.metricName()).toSet

  test("PutMetricData reaches CloudWatch at cloudWatchEndpointUrl, one cached client per connection") {
    val s = settings(cloudWatch, "SparkKinesisTests/Client")
    assert(s.connection.endpointUrl.contains(cloudWatch))
    val sender = CloudWatchSender(s)
    sender.put(s.namespace, Instant.now(),
      Seq(Datum("pendingRecords", Datum.Count, 42.0, Seq("QueryName" -> "q", "StreamName" -> "orders"))))
    assert(listed(s.connection, s.namespace, "orders") == Set("pendingRecords"))
    assert(KinesisClients.cloudWatch(s.connection) eq KinesisClients.cloudWatch(s.connection))
    sender.close()
    // Closing a sender leaves the shared client open: the next sender of the connection uses it.
    CloudWatchSender(s).put(s.namespace, Instant.now(),
      Seq(Datum("recordsRead", Datum.Count, 1.0, Seq("QueryName" -> "q", "StreamName" -> "orders"))))
    assert(listed(s.connection, s.namespace, "orders") == Set("pendingRecords", "recordsRead"))
  }

  test("a stopped publisher's last round reaches CloudWatch") {
    val s = settings(cloudWatch, "SparkKinesisTests/Stop")
    val stats = QueryStats(Seq(ReadStats("payments", 10.0, 20L, 5L, 50L, throttledCalls = 0L, recordsRead = 7L,
          bytesRead = 70L)), None)
    val publisher = new CloudWatchPublisher("stopping", s, () => stats, CloudWatchSender(s))
    publisher.start(CloudWatchPublisher.DefaultIntervalMillis) // no tick within the test: only the last round
    publisher.stop()
    val deadline = System.nanoTime() + 30L * 1000000000L
    var names = listed(s.connection, s.namespace, "payments")
    while (names.isEmpty && System.nanoTime() < deadline) {
      Thread.sleep(50)
      names = listed(s.connection, s.namespace, "payments")
    }
    assert(names.contains("recordsRead") && names.contains("maxMsBehindLatest"), names)
    assert(publisher.publishes == 1 && publisher.failures == 0)
  }

  test("the SDK retries a 500, and signs with the query's credentials without showing the secret") {
    val calls = new AtomicInteger()
    val authorizations = new ConcurrentLinkedQueue[String]()
    val server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0)
    server.createContext("/",
      exchange => {
        authorizations.add(Option(exchange.getRequestHeaders.getFirst("Authorization")).getOrElse("(none)"))
        exchange.getRequestBody.readAllBytes()
        val first = calls.getAndIncrement() == 0
        // An empty answer to the 500, the empty CBOR map (0xA0) PutMetricData answers with to the retry.
        val body = if (first) Array.emptyByteArray else Array(0xA0.toByte)
        exchange.getResponseHeaders.add("Content-Type", "application/cbor")
        exchange.getResponseHeaders.add("smithy-protocol", "rpc-v2-cbor")
        exchange.sendResponseHeaders(if (first) 500 else 200, if (body.isEmpty) -1L else body.length.toLong)
        exchange.getResponseBody.write(body)
        exchange.close()
      })
    server.start()
    try {
      val s = settings(s"http://127.0.0.1:${server.getAddress.getPort}", "SparkKinesisTests/Retry")
      CloudWatchSender(s).put(s.namespace, Instant.now(),
        Seq(Datum("recordsRead", Datum.Count, 1.0, Seq("QueryName" -> "q"))))
      assert(calls.get() == 2)
      val seen = authorizations.asScala.toList
      assert(seen.size == 2 && seen.forall(_.contains("Credential=AKIDCLOUDWATCHTEST/")), seen)
      assert(!seen.exists(_.contains("cloudwatch-test-secret")))
    } finally server.stop(0)
  }
}
