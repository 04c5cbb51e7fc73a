package io.sparkkinesis.aws

import java.net.{ConnectException, ServerSocket}

import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.core.exception.SdkClientException

import io.sparkkinesis.errors.KinesisException
import io.sparkkinesis.testing.{Integration, LocalKinesisServers, SharedSparkSession}
import io.sparkkinesis.testing.TestStreams._

/**
 * Issue 13.5: a wrong region, an endpoint where nothing listens and an unreachable STS fail after 3 s of retries
 * (they took 26 to 55 s) with [KINESIS_ENDPOINT_UNREACHABLE] naming the endpoint and the region; once an endpoint has
 * answered, connection failures are retried like any transient failure.
 */
@Integration
class FastFailureSuite extends AnyFunSuite with LocalKinesisServers with SharedSparkSession {

  /**
   * A guard, not a measurement: these failures take 3 to 8 s on an idle machine (3 s of retries, then Spark's own
   * work), 16 s when `make test`'s lanes overcommit 2 cores tenfold. What proves the first-contact budget applied is
   * the condition, [KINESIS_ENDPOINT_UNREACHABLE] (the normal budgets end with other errors), and its length is
   * checked exactly on a virtual clock in the last test; this bound catches a call that waits out a connect timeout
   * or the sink's 2-minute maxRetryDuration.
   */
  private val LimitSeconds = 60.0

  private def closedPort(): Int = {
    val socket = new ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))
    try socket.getLocalPort
    finally socket.close()
  }

  private val keys = Map("awsAccessKeyId" -> "local-test-key", "awsSecretKey" -> "local-test-secret")

  /** The messages of `action`'s exception and its causes, and how long it took to fail. */
  private def failure(action: => Any): (String, Double) = {
    spark.version // the shared session starts outside the measured time
    val start = System.nanoTime()
    val e = intercept[Exception](action)
    val seconds = (System.nanoTime() - start) / 1e9
    (Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).map(_.getMessage).mkString("\n"), seconds)
  }

  test("a wrong region fails the read at load() under the first-contact budget, naming the region and its endpoint") {
    val (message, seconds) = failure(
      spark.read.format("kinesis").options(keys + ("streamName" -> "orders") + ("region" -> "xx-nowhere-1")).load())
    assert(seconds < LimitSeconds, message)
    assert(
      message.contains("[KINESIS_ENDPOINT_UNREACHABLE] Cannot connect to the Kinesis endpoint " +
        "https://kinesis.xx-nowhere-1.amazonaws.com (region 'xx-nowhere-1') for ListShards on stream 'orders'"),
      message)
  }

  test("an endpoint where nothing listens fails the read under the first-contact budget, naming the endpoint") {
    val endpoint = s"http://127.0.0.1:${closedPort()}"
    val (message, seconds) = failure(spark.read.format("kinesis")
        .options(keys ++ Map("streamName" -> "orders", "region" -> "us-east-1", "endpointUrl" -> endpoint)).load())
    assert(seconds < LimitSeconds, message)
    assert(message.contains(s"[KINESIS_ENDPOINT_UNREACHABLE] Cannot connect to the Kinesis endpoint $endpoint " +
        "(region 'us-east-1')"), message)
    assert(message.contains("Connection refused"), message)
    assert(!message.contains("local-test-secret"), message)
  }

  test("an unreachable STS fails the read under the first-contact budget, naming the STS endpoint and the role") {
    val stream = freshStream(kinesalite, "fast-sts", 1)
    val sts = s"http://127.0.0.1:${closedPort()}"
    val role = "arn:aws:iam::123456789012:role/kinesis-reader"
    val (message, seconds) = failure(spark.read.format("kinesis")
        .options(options(kinesalite, stream) ++ Map("roleArn" -> role, "stsEndpointUrl" -> sts)).load())
    assert(seconds < LimitSeconds, message)
    assert(
      message.contains(s"[KINESIS_ENDPOINT_UNREACHABLE] Cannot connect to the STS endpoint $sts " +
        s"(region 'us-east-1'), to assume role $role for ListShards on stream '$stream'"), message)
  }

  test(
    "the sink with its defaults (a 2-minute maxRetryDuration) fails under the first-contact budget on an unreachable endpoint") {
    val endpoint = s"http://127.0.0.1:${closedPort()}"
    val s = spark
    import s.implicits._
    val (message, seconds) = failure(Seq(("a", "k")).toDF("data", "partitionKey").write.format("kinesis")
        .options(keys ++ Map("streamName" -> "orders", "region" -> "us-east-1", "endpointUrl" -> endpoint))
        .mode("append").save())
    assert(seconds < LimitSeconds, message)
    assert(
      message.contains(s"[KINESIS_ENDPOINT_UNREACHABLE] Cannot connect to the Kinesis endpoint $endpoint " +
        "(region 'us-east-1') for PutRecords on stream 'orders'"), message)
  }

  test("once the endpoint has answered, connection failures are retried under the normal budget") {
    val contact = Contact("us-east-1", Some(s"http://127.0.0.1:${closedPort()}"), None, None)
    val policy = RetryPolicy.Default.copy(contact = Some(contact))
    val refused = SdkClientException.builder().message("Unable to execute HTTP request: Connection refused")
      .cause(new ConnectException("Connection refused")).build()
    // A virtual clock: each pause moves it on, so the budgets are measured without waiting.
    def run(): (KinesisException, Int, Long) = {
      var now = 0L
      var calls = 0
      val e = intercept[KinesisException](policy.call("ListShards", "orders", sleep = ms => now += ms * 1000000L,
          nanoTime = () => now) { calls += 1; throw refused })
      (e, calls, now / 1000000L)
    }
    Contact.forget(contact)
    val (first, firstCalls, firstMillis) = run()
    assert(first.condition == "KINESIS_ENDPOINT_UNREACHABLE", first.getMessage)
    assert(
      firstMillis >= RetryPolicy.FirstContact.toMillis && firstMillis < RetryPolicy.FirstContact.toMillis +
        RetryPolicy.FirstContactMaxPauseMillis, s"$firstCalls calls in $firstMillis ms")

    policy.call("ListShards", "orders")("an answer") // the endpoint answers once
    val (later, laterCalls, laterMillis) = run()
    assert(later.condition == "KINESIS_RETRIES_EXHAUSTED", later.getMessage)
    assert(laterCalls == RetryPolicy.DefaultMaxRetries + 1)
    assert(laterMillis > 30000, s"$laterCalls calls in $laterMillis ms: a blip this long must be retried")
    Contact.forget(contact)
  }
}
