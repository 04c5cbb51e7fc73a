package io.sparkkinesis.aws

/**
 * Which enhanced fan-out consumer a streaming read uses (`consumerMode=efo`), as the options say; resolved on the
 * driver into one [[StreamConsumer]] per stream when the query starts.
 */
private[sparkkinesis] sealed trait ConsumerSpec extends Serializable
private[sparkkinesis] object ConsumerSpec {

  /**
   * The connector registers the consumer if it is missing (`name`, or `prefix` and a name derived from the query's
   * checkpoint when None) and, when `deregisterOnStop`, deregisters it when the query stops.
   */
  final case class Managed(name: Option[String], deregisterOnStop: Boolean, prefix: String = "") extends ConsumerSpec

  /** A consumer someone else manages, by name or by ARN: never registered or deregistered by the connector. */
  final case class Registered(id: String, byArn: Boolean) extends ConsumerSpec
}

/** An ACTIVE enhanced fan-out consumer of one stream (`stream`: the stream's name, as in `ShardKey.stream`). */
private[sparkkinesis] final case class StreamConsumer(stream: String, name: String, arn: String)
