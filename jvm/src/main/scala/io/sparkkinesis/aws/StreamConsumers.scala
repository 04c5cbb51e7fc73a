package io.sparkkinesis.aws

import java.nio.charset.StandardCharsets
import java.security.MessageDigest
import java.util.Locale

import scala.util.control.NonFatal

import org.apache.spark.internal.Logging
import software.amazon.awssdk.services.kinesis.KinesisClient
import software.amazon.awssdk.services.kinesis.model._

import io.sparkkinesis.errors.{KinesisErrors, KinesisException}

/**
 * The enhanced fan-out consumers of a query, on the driver: looked up, registered when missing and waited for
 * until ACTIVE when the query starts ([[acquire]]), deregistered when it stops if the options ask ([[release]]).
 *
 * A consumer left DELETING by a query that just stopped (a fast restart with `requireConsumerDeregistration`) is
 * waited for until it is gone and then registered again, rather than used or raced (Flink's FLINK-37908). Two
 * queries registering the same name at once both end up with the one consumer. A stream that already has the
 * most consumers it may have fails with [KINESIS_CONSUMER_LIMIT]; a consumer named by `registeredConsumerId` that
 * does not exist fails with [KINESIS_CONSUMER_NOT_FOUND], and is never registered or deregistered.
 */
private[sparkkinesis] object StreamConsumers extends Logging {

  /** How long a consumer may take to become ACTIVE (AWS: seconds; deregistration: up to a minute or so). */
  val ActiveTimeoutMillis = 180000L

  private val Pause = Backoff(baseMillis = 200, capMillis = 2000)

  /** The default consumer name: stable for one checkpoint location, different for another. */
  def defaultName(checkpointLocation: String): String = {
    val digest = MessageDigest.getInstance("SHA-256").digest(checkpointLocation.getBytes(StandardCharsets.UTF_8))
    "spark-kinesis-" + digest.take(8).map(b => f"${b & 0xFF}%02x").mkString
  }

  def acquire(
      conn: AwsConnection,
      streams: Seq[StreamRef],
      spec: ConsumerSpec,
      defaultName: String): Seq[StreamConsumer] = {
    val client = KinesisClients.sync(conn)
    val policy = RetryPolicy.Default.on(conn)
    streams.map { stream =>
      spec match {
        case ConsumerSpec.Registered(arn, true) =>
          // Looked up by its stream and name (both in the ARN), then checked to be that very consumer.
          val name = arn.substring(arn.indexOf("/consumer/") + "/consumer/".length, arn.lastIndexOf(':'))
          val found = awaitActive(client, policy, stream, Right((streamArn(client, policy, stream), name)),
            register = false, label = arn)
          if (found.arn != arn)
            throw KinesisErrors.consumerNotFound(arn, stream.toString,
              new IllegalStateException(s"the stream's consumer named '$name' is ${found.arn}"))
          found
        case ConsumerSpec.Registered(name, false) =>
          awaitActive(client, policy, stream, Right((streamArn(client, policy, stream), name)), register = false)
        case ConsumerSpec.Managed(name, _, prefix) =>
          awaitActive(client, policy, stream,
            Right((streamArn(client, policy, stream), name.getOrElse(prefix + defaultName))),
            register = true)
      }
    }
  }

  def release(conn: AwsConnection, consumers: Seq[StreamConsumer], spec: ConsumerSpec): Unit = spec match {
    case ConsumerSpec.Managed(_, true, _) =>
      val client = KinesisClients.sync(conn)
      val policy = RetryPolicy.Default.on(conn)
      consumers.foreach { c =>
        try {
          // By the stream's ARN and the consumer's name (the ARN of the consumer would do as well on AWS).
          val streamArn = c.arn.substring(0, c.arn.indexOf("/consumer/"))
          policy.call("DeregisterStreamConsumer", c.stream)(client.deregisterStreamConsumer(
              DeregisterStreamConsumerRequest.builder().streamARN(streamArn).consumerName(c.name).build()))
          logInfo(s"Deregistered the enhanced fan-out consumer ${c.name} of stream '${c.stream}'")
        } catch {
          case NonFatal(e) =>
            logWarning(s"Could not deregister the enhanced fan-out consumer ${c.name} of stream '${c.stream}' " +
              s"(${KinesisErrors.safeMessage(e).take(200)}); deregister it by hand if no query uses it")
        }
      }
    case _ =>
  }

  private def streamArn(client: KinesisClient, policy: RetryPolicy, stream: StreamRef): String =
    stream.arn.getOrElse(policy.call("DescribeStreamSummary", stream.toString)(
        client.describeStreamSummary(DescribeStreamSummaryRequest.builder().streamName(stream.name).build()))
        .streamDescriptionSummary().streamARN())

  /**
   * The consumer (by ARN, or by stream ARN and name) once ACTIVE: registered first when missing and `register`,
   * after a deregistration still under way has finished.
   */
  private def awaitActive(
      client: KinesisClient,
      policy: RetryPolicy,
      stream: StreamRef,
      id: Either[String, (String, String)],
      register: Boolean,
      label: String = null): StreamConsumer = {
    val named = Option(label).getOrElse(id.fold(identity, _._2))
    val started = System.currentTimeMillis()
    var attempt = 0
    var lastStatus = "missing"
    while (System.currentTimeMillis() - started < ActiveTimeoutMillis) {
      describe(client, policy, stream, id) match {
        case Some(d) if d.consumerStatus() == ConsumerStatus.ACTIVE =>
          return StreamConsumer(stream.name, d.consumerName(), d.consumerARN())
        case Some(d) =>
          // CREATING: wait; DELETING: wait until it is gone, then register it again (a fast restart).
          lastStatus = d.consumerStatusAsString().toLowerCase(Locale.ROOT)
          if (d.consumerStatus() == ConsumerStatus.DELETING && !register)
            throw KinesisErrors.consumerNotFound(named, stream.toString,
              new IllegalStateException(s"the consumer is being deregistered"))
        case None if !register =>
          throw KinesisErrors.consumerNotFound(named, stream.toString,
            new IllegalStateException("DescribeStreamConsumer: not found"))
        case None =>
          val (arn, name) = id.toOption.get
          registerOnce(client, policy, stream, arn, name)
          lastStatus = "creating"
      }
      attempt += 1
      Thread.sleep(Pause.delayMillis(math.min(attempt, 4)))
    }
    throw KinesisErrors.consumerNotActive(named, stream.toString, lastStatus, ActiveTimeoutMillis / 1000)
  }

  private def describe(
      client: KinesisClient,
      policy: RetryPolicy,
      stream: StreamRef,
      id: Either[String, (String, String)]): Option[ConsumerDescription] = {
    val request = id.fold(
      arn => DescribeStreamConsumerRequest.builder().consumerARN(arn),
      { case (streamArn, name) => DescribeStreamConsumerRequest.builder().streamARN(streamArn).consumerName(name) })
    try Some(policy.call("DescribeStreamConsumer", stream.toString)(
          client.describeStreamConsumer(request.build())).consumerDescription())
    catch { case e: KinesisException if e.getCause.isInstanceOf[ResourceNotFoundException] => None }
  }

  /** RegisterStreamConsumer; another registration of the same name under way is fine (it is waited for). */
  private def registerOnce(
      client: KinesisClient,
      policy: RetryPolicy,
      stream: StreamRef,
      arn: String,
      name: String): Unit =
    try {
      client.registerStreamConsumer(RegisterStreamConsumerRequest.builder().streamARN(arn).consumerName(name).build())
      logInfo(s"Registered the enhanced fan-out consumer $name on stream '$stream'")
    } catch {
      case _: ResourceInUseException => // registered (or being deleted) meanwhile: the next look tells
      case e: LimitExceededException if tooManyConsumers(e) =>
        throw KinesisErrors.consumerLimit(stream.toString, name, e)
      case e: Throwable if Failure.of(e).retryable => // throttled or transient: the next look tries again
      case e: Throwable => throw Failure.toUserError(e, "RegisterStreamConsumer", stream.toString)
    }

  /**
   * Whether a LimitExceededException says the stream has the most consumers it may have, rather than that too
   * many are being created at once or calls come too fast (both of which pass when tried again).
   */
  private def tooManyConsumers(e: LimitExceededException): Boolean = {
    val m = Option(e.getMessage).getOrElse("").toLowerCase(Locale.ROOT)
    m.contains("consumer") && !m.contains("at the same time") && !m.contains("rate")
  }
}
