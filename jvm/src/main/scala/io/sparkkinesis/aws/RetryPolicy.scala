package io.sparkkinesis.aws

import java.time.Duration

import io.sparkkinesis.errors.KinesisErrors

/**
 * The one failure policy of the connector, for the source, the sink and shard discovery alike: which failures
 * are tried again ([[Failure.retryable]]: throttling, 5xx and I/O errors), how long to pause before each retry
 * ([[Backoff]], with jitter), and when to give up: after `maxRetries` retries, or once `maxDuration` has passed
 * since the first failure. Callers that send one call at a time use [[call]]; the sink, which retries single
 * records of many calls in flight, asks [[exhausted]] and [[delayMillis]] itself.
 */
private[sparkkinesis] final case class RetryPolicy(
    maxRetries: Int = RetryPolicy.DefaultMaxRetries,
    backoff: Backoff = Backoff(),
    maxDuration: Option[Duration] = None) {

  /** Whether a call that has failed `failures` times, the first time `sinceFirstNanos` ago, must give up. */
  def exhausted(failures: Int, sinceFirstNanos: Long): Boolean =
    failures > maxRetries || maxDuration.exists(d => sinceFirstNanos >= d.toNanos)

  /** The pause before the next try of a call that has failed `failures` times (1 for the first failure). */
  def delayMillis(failures: Int): Long = backoff.delayMillis(failures - 1)

  /**
   * Runs `f` until it succeeds, retrying retryable failures under this policy. Failures in `handled` are the
   * caller's to repair (its handler runs, then `f` is tried again without counting a retry, e.g. an expired
   * iterator). `onRetry` sees every failure that will be retried. Anything else, or a retryable failure once the
   * policy is exhausted, ends the call with the user-facing error of [[Failure.toUserError]] or
   * [KINESIS_RETRIES_EXHAUSTED].
   */
  def call[T](
      operation: String,
      stream: String,
      handled: PartialFunction[Failure, Unit] = PartialFunction.empty,
      onRetry: Failure => Unit = _ => (),
      sleep: Long => Unit = Thread.sleep,
      nanoTime: () => Long = () => System.nanoTime())(f: => T): T = {
    var failures = 0
    var firstFailure = 0L
    var codes = List.empty[String]
    while (true) {
      try return f
      catch {
        case e: Throwable if Failure.of(e).retryable || handled.isDefinedAt(Failure.of(e)) =>
          val failure = Failure.of(e)
          if (handled.isDefinedAt(failure)) handled(failure)
          else {
            val now = nanoTime()
            if (failures == 0) firstFailure = now
            failures += 1
            codes ::= Failure.code(e)
            if (exhausted(failures, now - firstFailure))
              throw KinesisErrors.retriesExhausted(s"$operation on stream '$stream'", failures, codes,
                Failure.unwrap(e))
            onRetry(failure)
            sleep(delayMillis(failures))
          }
        case e: Throwable => throw Failure.toUserError(e, operation, stream)
      }
    }
    throw new IllegalStateException("unreachable")
  }
}

private[sparkkinesis] object RetryPolicy {

  /** Control-plane and read calls: 12 attempts in all. */
  val DefaultMaxRetries = 11
  val Default: RetryPolicy = RetryPolicy()
}
