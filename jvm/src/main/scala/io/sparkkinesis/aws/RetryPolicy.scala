package io.sparkkinesis.aws

import java.time.Duration

import io.sparkkinesis.errors.KinesisErrors

/**
 * The one failure policy of the connector, for the source, the sink and shard discovery alike: which failures
 * are tried again ([[Failure.retryable]]: throttling, 5xx and I/O errors), how long to pause before each retry
 * ([[Backoff]], with jitter), and when to give up: after `maxRetries` retries, or once `maxDuration` has passed
 * since the first failure. Callers that send one call at a time use [[call]]; a caller that waits between tries
 * itself (a real-time task, which reads other shards meanwhile) counts a call's failures in a [[Retries]]; the sink,
 * which retries single records of many calls in flight, asks [[exhausted]] and [[delayMillis]] itself.
 *
 * Connection failures ([[Failure.Unreachable]]) of a `contact` that has never answered in this JVM (a wrong
 * region or endpoint, STS unreachable, no network path) have a budget of their own, [[RetryPolicy.FirstContact]]
 * since the first failure with pauses of at most a second, and then end with [KINESIS_ENDPOINT_UNREACHABLE]
 * naming the endpoint and the region. Once the endpoint has answered, they are retried like any transient
 * failure, under `maxRetries` and `maxDuration`, so a network blip does not fail a running query.
 */
private[sparkkinesis] final case class RetryPolicy(
    maxRetries: Int = RetryPolicy.DefaultMaxRetries,
    backoff: Backoff = Backoff(),
    maxDuration: Option[Duration] = None,
    contact: Option[Contact] = None) {

  /** The same policy for the calls of `connection` (which gives its connection failures the first-contact rule). */
  def on(connection: AwsConnection): RetryPolicy = copy(contact = Some(Contact.of(connection)))

  /** Whether a call that has failed `failures` times, the first time `sinceFirstNanos` ago, must give up. */
  def exhausted(failures: Int, sinceFirstNanos: Long): Boolean =
    failures > maxRetries || maxDuration.exists(d => sinceFirstNanos >= d.toNanos)

  /** Whether `failure` could not reach an endpoint that has never answered in this JVM (see the class comment). */
  def firstContact(failure: Failure): Boolean =
    failure == Failure.Unreachable && contact.exists(c => !Contact.hasAnswered(c))

  /** [[exhausted]], or, for a connection failure before first contact, its own shorter budget is spent. */
  def exhausted(failure: Failure, failures: Int, sinceFirstNanos: Long): Boolean =
    exhausted(failures, sinceFirstNanos) ||
      (firstContact(failure) && sinceFirstNanos >= RetryPolicy.FirstContact.toNanos)

  /** The pause before the next try of a call that has failed `failures` times (1 for the first failure). */
  def delayMillis(failures: Int): Long = backoff.delayMillis(failures - 1)

  /** [[delayMillis]], at most a second for a connection failure before first contact. */
  def delayMillis(failure: Failure, failures: Int): Long = {
    val delay = delayMillis(failures)
    if (firstContact(failure)) math.min(delay, RetryPolicy.FirstContactMaxPauseMillis) else delay
  }

  /** Records that the service answered a call (a result, or an error of its own) when `outcome` says so. */
  def answered(outcome: Option[Throwable]): Unit =
    if (outcome.forall(Failure.answeredByService)) contact.foreach(Contact.answered)

  /**
   * The error for a call that gave up after `failures` failures, the last one `last`: [KINESIS_ENDPOINT_UNREACHABLE]
   * when connections were failing to an endpoint that never answered, else `exhausted`.
   */
  def giveUp(what: String, failures: Int, sinceFirstNanos: Long, last: Throwable)(exhausted: => Throwable): Throwable =
    contact match {
      case Some(c) if firstContact(Failure.of(last)) =>
        val cause = Failure.unwrap(last)
        KinesisErrors.endpointUnreachable(c.describe(cause), what, failures, sinceFirstNanos / 1e9, cause)
      case _ => exhausted
    }

  /**
   * Runs `f` until it succeeds, retrying retryable failures under this policy. Failures in `handled` are the
   * caller's to repair (its handler runs, then `f` is tried again without counting a retry, e.g. an expired
   * iterator). `onRetry` sees every failure that will be retried. Anything else, or a retryable failure once the
   * policy is exhausted, ends the call with the user-facing error of [[Failure.toUserError]] or
   * [KINESIS_RETRIES_EXHAUSTED]. `what` names the call in that error, `<operation> on stream '<stream>'` unless given.
   */
  def call[T](
      operation: String,
      stream: String,
      handled: PartialFunction[Failure, Unit] = PartialFunction.empty,
      onRetry: Failure => Unit = _ => (),
      sleep: Long => Unit = Thread.sleep,
      nanoTime: () => Long = () => System.nanoTime(),
      what: Option[String] = None)(f: => T): T = {
    val retries = new Retries(operation, stream, what)
    while (true) {
      try {
        val result = f
        answered(None)
        return result
      } catch {
        case e: Throwable if handled.isDefinedAt(Failure.of(e)) =>
          answered(Some(e))
          handled(Failure.of(e))
        case e: Throwable =>
          val pause = retries.failed(e, nanoTime())
          onRetry(Failure.of(e))
          sleep(pause)
      }
    }
    throw new IllegalStateException("unreachable")
  }

  /**
   * The failures of one call so far, for a caller that waits between tries itself instead of in [[call]]: a
   * real-time task reading several shards, which must not hold the others while one of them backs off. The same
   * rules as [[call]] (which uses it): [[failed]] answers the pause before the next try, or throws what ends the call.
   */
  final class Retries(operation: String, stream: String, named: Option[String] = None) {
    private var failures = 0
    private var firstFailure = 0L
    private var codes = List.empty[String]

    /** Failures since the last success. */
    def count: Int = failures

    /** The call succeeded: the next failure starts a new count. */
    def succeeded(): Unit = { failures = 0; codes = Nil }

    /**
     * Counts `e`, which the call failed with `nowNanos` (System.nanoTime): the pause in milliseconds before the next
     * try when it is retryable and the policy not exhausted; else throws [KINESIS_RETRIES_EXHAUSTED] (or
     * [KINESIS_ENDPOINT_UNREACHABLE]), or the user-facing error of [[Failure.toUserError]] for a failure retrying
     * cannot fix.
     */
    def failed(e: Throwable, nowNanos: Long): Long = {
      answered(Some(e))
      val failure = Failure.of(e)
      if (!failure.retryable) throw Failure.toUserError(e, operation, stream)
      if (failures == 0) firstFailure = nowNanos
      failures += 1
      codes ::= Failure.code(e)
      if (exhausted(failure, failures, nowNanos - firstFailure)) {
        val what = named.getOrElse(s"$operation on stream '$stream'")
        throw giveUp(what, failures, nowNanos - firstFailure, e)(
          KinesisErrors.retriesExhausted(what, failures, codes, Failure.unwrap(e)))
      }
      delayMillis(failure, failures)
    }
  }
}

private[sparkkinesis] object RetryPolicy {

  /** Control-plane and read calls: 12 attempts in all. */
  val DefaultMaxRetries = 11
  val Default: RetryPolicy = RetryPolicy()

  /** How long connections to an endpoint that has never answered in this JVM are retried. */
  val FirstContact: Duration = Duration.ofSeconds(3)
  val FirstContactMaxPauseMillis = 1000L
}
