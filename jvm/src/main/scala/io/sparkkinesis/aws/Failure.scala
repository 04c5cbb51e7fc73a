package io.sparkkinesis.aws

import java.net.{ConnectException, NoRouteToHostException, SocketTimeoutException, UnknownHostException}
import java.util.concurrent.{CompletionException, ExecutionException}

import software.amazon.awssdk.awscore.exception.AwsServiceException
import software.amazon.awssdk.core.exception.{SdkClientException, SdkServiceException}
import software.amazon.awssdk.services.dynamodb.{model => ddb}
import software.amazon.awssdk.services.kinesis.model._

import io.sparkkinesis.errors.{KinesisErrors, KinesisException, KinesisOptionException}

/** What a failed Kinesis, DynamoDB Streams or STS call means for the caller: the one classification every caller uses. */
private[sparkkinesis] sealed trait Failure {

  /** Whether trying the same call again, after a pause, may succeed. */
  def retryable: Boolean = false
}

private[sparkkinesis] object Failure {

  /** Throttled by the service: back off and try again. */
  case object Throttled extends Failure { override def retryable: Boolean = true }

  /** A 5xx or an I/O problem: try again after a pause. */
  case object Transient extends Failure { override def retryable: Boolean = true }

  /**
   * No connection could be opened: refused, unknown host (a misspelt region or endpoint), no route, connect
   * timeout. Retried like [[Transient]] once the endpoint has answered in this JVM (a network blip); before that,
   * [[RetryPolicy]] gives it a short budget of its own, so a wrong region or endpoint fails within seconds.
   */
  case object Unreachable extends Failure { override def retryable: Boolean = true }
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

  /** The failure behind an async call's wrapper exceptions. */
  def unwrap(t: Throwable): Throwable = t match {
    case e @ (_: CompletionException | _: ExecutionException) if e.getCause != null => unwrap(e.getCause)
    case e => e
  }

  def of(thrown: Throwable): Failure = unwrap(thrown) match {
    case e: AwsServiceException if CredentialCodes.contains(code(e)) => AccessDenied
    case _: ProvisionedThroughputExceededException | _: LimitExceededException | _: KmsThrottlingException =>
      Throttled
    case _: ExpiredIteratorException => ExpiredIterator
    case _: ResourceNotFoundException => NotFound
    // DynamoDB Streams (format "dynamodb-streams"): the same meanings under the DynamoDB model's classes.
    case _: ddb.LimitExceededException => Throttled
    case _: ddb.ExpiredIteratorException => ExpiredIterator
    case _: ddb.ResourceNotFoundException => NotFound
    case _: AccessDeniedException => AccessDenied
    case e: SdkServiceException if e.statusCode() == 403 => AccessDenied
    case e: SdkServiceException if e.isThrottlingException || e.statusCode() == 429 => Throttled
    case e: SdkServiceException if e.statusCode() >= 500 => Transient
    case e: SdkClientException if Option(e.getMessage).exists(_.contains("Unable to load credentials")) =>
      NoCredentials
    case e: SdkClientException if connectionFailure(e) => Unreachable
    case _: SdkClientException => Transient
    case _ => Fatal
  }

  /** Whether `t`, or a cause of it, says no connection could be opened (rather than one that broke). */
  def connectionFailure(t: Throwable): Boolean =
    Iterator.iterate(t)(_.getCause).takeWhile(_ != null).take(10).exists {
      case _: ConnectException | _: UnknownHostException | _: NoRouteToHostException => true
      case e: SocketTimeoutException => Option(e.getMessage).exists(_.toLowerCase.contains("connect timed out"))
      case _ => false
    }

  /** Whether the service itself answered with `thrown` (as opposed to the call not reaching it). */
  def answeredByService(thrown: Throwable): Boolean = unwrap(thrown).isInstanceOf[SdkServiceException]

  /** The service's error code, for reports such as "error codes seen". */
  def code(thrown: Throwable): String = unwrap(thrown) match {
    case e: AwsServiceException if e.awsErrorDetails() != null && e.awsErrorDetails().errorCode() != null =>
      e.awsErrorDetails().errorCode()
    case e => e.getClass.getSimpleName
  }

  /**
   * The one mapping from a failure that retrying cannot (or can no longer) fix to the error the user sees: a
   * `[KINESIS_*]` condition naming the operation and the stream. Errors the connector already built, interrupts
   * and JVM errors pass through unchanged.
   */
  def toUserError(thrown: Throwable, operation: String, stream: String): Throwable = {
    val cause = unwrap(thrown)
    cause match {
      case e @ (_: KinesisException | _: KinesisOptionException | _: InterruptedException | _: Error) => e
      case _ =>
        of(cause) match {
          case NotFound => KinesisErrors.streamNotFound(stream, cause)
          case AccessDenied => KinesisErrors.accessDenied(stream, operation, cause)
          case NoCredentials => KinesisErrors.noCredentials(cause)
          case _ => KinesisErrors.serviceError(operation, stream, cause)
        }
    }
  }
}
