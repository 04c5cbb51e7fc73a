package io.sparkkinesis.reader

import java.util.concurrent.ThreadLocalRandom

import io.sparkkinesis.errors.{KinesisErrors, KinesisException}
import software.amazon.awssdk.core.exception.{SdkClientException, SdkServiceException}
import software.amazon.awssdk.services.kinesis.model._

/** What a failed Kinesis call means for the caller. */
sealed trait Failure
object Failure {
  /** Throttled by the service: back off and try again. */
  case object Throttled extends Failure
  /** A 5xx or an I/O problem: try again after a pause. */
  case object Transient extends Failure
  case object ExpiredIterator extends Failure
  case object NotFound extends Failure
  case object AccessDenied extends Failure
  /** The SDK found no credentials at all (default chain, profile): retrying cannot help. */
  case object NoCredentials extends Failure
  /** Anything else (validation, bad arguments): retrying cannot help. */
  case object Fatal extends Failure

  /** Error codes of rejected credentials or signatures (sent as HTTP 400 or 403): retrying cannot help. */
  val CredentialCodes: Set[String] = Set("UnrecognizedClientException", "InvalidSignatureException",
    "ExpiredTokenException", "IncompleteSignature", "MissingAuthenticationToken", "InvalidClientTokenId",
    "AccessDeniedException", "SignatureDoesNotMatch")

  def of(t: Throwable): Failure = t match {
    case e: software.amazon.awssdk.awscore.exception.AwsServiceException if CredentialCodes.contains(code(e)) =>
      AccessDenied
    case _: ProvisionedThroughputExceededException | _: LimitExceededException | _: KmsThrottlingException => Throttled
    case _: ExpiredIteratorException => ExpiredIterator
    case _: ResourceNotFoundException => NotFound
    case _: AccessDeniedException => AccessDenied
    case e: SdkServiceException if e.statusCode() == 403 => AccessDenied
    case e: SdkServiceException if e.isThrottlingException || e.statusCode() == 429 => Throttled
    case e: SdkServiceException if e.statusCode() >= 500 => Transient
    case e: SdkClientException if Option(e.getMessage).exists(_.contains("Unable to load credentials")) =>
      NoCredentials
    case _: SdkClientException => Transient
    case _ => Fatal
  }

  /** The service's error code, for reports such as "error codes seen". */
  def code(t: Throwable): String = t match {
    case e: software.amazon.awssdk.awscore.exception.AwsServiceException if e.awsErrorDetails() != null &&
      e.awsErrorDetails().errorCode() != null => e.awsErrorDetails().errorCode()
    case e => e.getClass.getSimpleName
  }
}

/** Exponential backoff with full jitter: a random pause in [0, min(cap, base * 2^attempt)]. */
final case class Backoff(baseMillis: Long = 100, capMillis: Long = 10000) {
  def delayMillis(attempt: Int): Long = {
    val ceiling = math.min(capMillis, baseMillis * (1L << math.min(attempt, 20)))
    ThreadLocalRandom.current().nextLong(ceiling / 2, ceiling + 1)
  }
}

/** Runs control-plane and read calls with retries for throttling and transient errors. */
object Retrying {
  val DefaultAttempts = 12

  def call[T](operation: String, stream: String, attempts: Int = DefaultAttempts, backoff: Backoff = Backoff())
             (f: => T): T = {
    var attempt = 0
    var codes = List.empty[String]
    while (true) {
      try return f
      catch {
        case e: Throwable if !e.isInstanceOf[KinesisException] =>
          Failure.of(e) match {
            case Failure.Throttled | Failure.Transient if attempt + 1 < attempts =>
              codes ::= Failure.code(e)
              Thread.sleep(backoff.delayMillis(attempt))
              attempt += 1
            case Failure.Throttled | Failure.Transient =>
              throw KinesisErrors.retriesExhausted(s"$operation on stream '$stream'", attempt + 1, Failure.code(e) :: codes, e)
            case Failure.NotFound => throw KinesisErrors.streamNotFound(stream, e)
            case Failure.AccessDenied => throw KinesisErrors.accessDenied(stream, operation, e)
            case Failure.NoCredentials => throw KinesisErrors.noCredentials(e)
            case _ => throw e
          }
      }
    }
    throw new IllegalStateException("unreachable")
  }
}
