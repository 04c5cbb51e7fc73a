package io.sparkkinesis.errors

/**
 * An error condition of `error/kinesis-error-conditions.json` that the connector's own code reacts to (a stream gone,
 * a retry budget spent, an endpoint out of reach): built by [[KinesisErrors]] and recognized with
 * [[KinesisThrowable.is]], so a renamed condition is a compile error, not a comparison that silently stops matching.
 */
private[sparkkinesis] final case class Condition(name: String)

private[sparkkinesis] object Condition {
  val StreamNotFound: Condition = Condition("KINESIS_STREAM_NOT_FOUND")
  val RetriesExhausted: Condition = Condition("KINESIS_RETRIES_EXHAUSTED")
  val EndpointUnreachable: Condition = Condition("KINESIS_ENDPOINT_UNREACHABLE")
}
