package io.sparkkinesis.aws

import io.sparkkinesis.compat.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.services.kinesis.model._

import io.sparkkinesis.errors.KinesisException
import io.sparkkinesis.testing.{Integration, LocalKinesisServer, LocalKinesisServers}
import io.sparkkinesis.testing.TestStreams._

/** The consumer lifecycle on kinesis-mock, which serves the consumer APIs (and enforces 20 per stream). */
@Integration
class StreamConsumersSuite extends AnyFunSuite with LocalKinesisServers {

  private def server: LocalKinesisServer = kinesisMock
  private def conn: AwsConnection = connection(server)

  private def streamArn(stream: String): String = syncClient(server)
    .describeStreamSummary(DescribeStreamSummaryRequest.builder().streamName(stream).build())
    .streamDescriptionSummary().streamARN()

  /** The stream's consumers as ListStreamConsumers lists them. */
  private def consumers(stream: String): Seq[Consumer] =
    syncClient(server).listStreamConsumers(ListStreamConsumersRequest.builder().streamARN(streamArn(stream)).build())
      .consumers().asScala.toSeq

  /** A consumer's ARN as DescribeStreamConsumer by stream and name gives it. */
  private def consumerArn(stream: String, name: String): String = syncClient(server)
    .describeStreamConsumer(DescribeStreamConsumerRequest.builder().streamARN(streamArn(stream)).consumerName(name)
        .build()).consumerDescription().consumerARN()

  private def ref(stream: String) = StreamRef(stream, None, None)

  test("a missing consumer is registered and waited for; acquiring again reuses it; release deregisters when asked") {
    val stream = freshStream(server, "consumers-managed", 1)
    val spec = ConsumerSpec.Managed(None, deregisterOnStop = false)
    val first = StreamConsumers.acquire(conn, Seq(ref(stream)), spec, "q-default")
    assert(first.map(c => (c.stream, c.name)) == Seq((stream, "q-default")))
    assert(consumers(stream).map(c => (c.consumerName(), c.consumerStatus())) == Seq(("q-default",
        ConsumerStatus.ACTIVE)))
    val again = StreamConsumers.acquire(conn, Seq(ref(stream)), spec, "q-default")
    assert(again == first, "the same consumer, not a second one")
    StreamConsumers.release(conn, again, spec)
    assert(consumers(stream).size == 1, "kept: deregistration was not asked for")
    StreamConsumers.release(conn, again, ConsumerSpec.Managed(None, deregisterOnStop = true))
    val deadline = System.nanoTime() + 30L * 1000 * 1000 * 1000
    while (consumers(stream).exists(_.consumerStatus() == ConsumerStatus.ACTIVE) && System.nanoTime() < deadline)
      Thread.sleep(50)
    assert(!consumers(stream).exists(_.consumerStatus() == ConsumerStatus.ACTIVE), "deregistered: DELETING or gone")
  }

  test("right after a deregistration (still DELETING), acquire waits for it to go and registers it again") {
    val stream = freshStream(server, "consumers-race", 1)
    val spec = ConsumerSpec.Managed(Some("fast-restart"), deregisterOnStop = true)
    val first = StreamConsumers.acquire(conn, Seq(ref(stream)), spec, "unused")
    StreamConsumers.release(conn, first, spec)
    val second = StreamConsumers.acquire(conn, Seq(ref(stream)), spec, "unused")
    assert(second.head.name == "fast-restart")
    assert(consumers(stream).map(c => (c.consumerName(), c.consumerStatus())) ==
      Seq(("fast-restart", ConsumerStatus.ACTIVE)))
  }

  test("a consumer someone else registered is used by name or ARN; a missing one fails at once, unregistered") {
    val stream = freshStream(server, "consumers-registered", 1)
    syncClient(server).registerStreamConsumer(RegisterStreamConsumerRequest.builder()
        .streamARN(streamArn(stream)).consumerName("theirs").build())
    val arn = consumerArn(stream, "theirs")
    val byName = StreamConsumers.acquire(conn, Seq(ref(stream)), ConsumerSpec.Registered("theirs", byArn = false), "x")
    assert(byName.map(_.arn) == Seq(arn))
    val byArn = StreamConsumers.acquire(conn, Seq(ref(stream)), ConsumerSpec.Registered(arn, byArn = true), "x")
    assert(byArn.map(_.arn) == Seq(arn))
    StreamConsumers.release(conn, byArn, ConsumerSpec.Registered(arn, byArn = true))
    assert(consumers(stream).map(_.consumerStatus()) == Seq(ConsumerStatus.ACTIVE), "never deregistered")

    val started = System.nanoTime()
    val e = intercept[KinesisException](
      StreamConsumers.acquire(conn, Seq(ref(stream)), ConsumerSpec.Registered("nobody", byArn = false), "x"))
    assert(e.condition == "KINESIS_CONSUMER_NOT_FOUND" && e.getMessage.contains("nobody"))
    assert((System.nanoTime() - started) / 1e9 < 10, "fails fast")
    assert(consumers(stream).map(_.consumerName()) == Seq("theirs"), "nothing registered")
  }

  test("a stream with 20 consumers fails the registration with [KINESIS_CONSUMER_LIMIT]") {
    val stream = freshStream(server, "consumers-limit", 1)
    // Registered with the SDK, waiting out "only 5 consumers can be created at the same time".
    val deadline = System.nanoTime() + 60L * 1000 * 1000 * 1000
    (0 until 20).foreach { i =>
      var done = false
      while (!done) {
        try {
          syncClient(server).registerStreamConsumer(RegisterStreamConsumerRequest.builder()
              .streamARN(streamArn(stream)).consumerName(s"other-$i").build())
          done = true
        } catch {
          case _: LimitExceededException if System.nanoTime() < deadline => Thread.sleep(100)
        }
      }
    }
    val e = intercept[KinesisException](StreamConsumers.acquire(conn, Seq(ref(stream)),
        ConsumerSpec.Managed(Some("one-too-many"), deregisterOnStop = false), "x"))
    assert(e.condition == "KINESIS_CONSUMER_LIMIT" && e.getMessage.contains("one-too-many"))
  }
}
