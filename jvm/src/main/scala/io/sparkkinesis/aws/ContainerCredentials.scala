package io.sparkkinesis.aws

import java.io.IOException
import java.net.{HttpURLConnection, Inet6Address, InetAddress, URI}
import java.nio.charset.StandardCharsets.UTF_8
import java.time.{Duration, Instant}

import scala.util.Try
import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.ObjectMapper
import software.amazon.awssdk.auth.credentials.{AwsCredentials, AwsCredentialsProvider, AwsSessionCredentials}
import software.amazon.awssdk.core.exception.SdkClientException
import software.amazon.awssdk.utils.SdkAutoCloseable
import software.amazon.awssdk.utils.cache.{CachedSupplier, NonBlocking, RefreshResult}

import io.sparkkinesis.config.KinesisOptions

/**
 * Credentials from a container credentials endpoint (ECS task roles, EKS Pod Identity) at a URI the options name,
 * with the `Authorization` header read from a token file at every refresh (EKS Pod Identity rotates it). The SDK's
 * own provider takes the URI and the token file from the process's environment only, the same for every client of
 * the JVM, so the connector fetches them itself, as the SDK's provider does: an answer of 5xx or an I/O error is tried
 * again, up to [[ContainerCredentials.MaxRetries]] times; redirects are not followed (a 3xx is refused); and over
 * plain HTTP, the host's addresses are checked when the credentials are fetched and the request goes to the checked
 * address itself, so no second name lookup can send it elsewhere. Fetched again [[ContainerCredentials.Prefetch]]
 * before they expire, in the background. Errors name the endpoint and the HTTP status, never the token or the
 * answer.
 */
private[aws] final class ContainerCredentials(uri: URI, tokenFile: Option[String])
  extends AwsCredentialsProvider with SdkAutoCloseable {

  private val json = new ObjectMapper()

  private val cache: CachedSupplier[AwsCredentials] =
    CachedSupplier.builder[AwsCredentials](() => fetch())
      .prefetchStrategy(new NonBlocking("kinesis-container-credentials")).cachedValueName("ContainerCredentials")
      .build()

  override def resolveCredentials(): AwsCredentials = cache.get()

  override def close(): Unit = cache.close()

  private def fetch(): RefreshResult[AwsCredentials] = {
    val target = ContainerCredentials.target(uri)
    val body = attempt(target, retriesLeft = ContainerCredentials.MaxRetries)
    try {
      val answer = json.readTree(body)
      def field(name: String): String = Option(answer.get(name)).map(_.asText()).filter(_.nonEmpty).getOrElse(
        throw SdkClientException.create(s"The container credentials endpoint $uri answered without '$name'."))
      val expiration = Option(answer.get("Expiration")).map(e => Instant.parse(e.asText()))
      val credentials = AwsSessionCredentials.builder().accessKeyId(field("AccessKeyId"))
        .secretAccessKey(field("SecretAccessKey")).sessionToken(field("Token"))
      expiration.foreach(credentials.expirationTime)
      val result = RefreshResult.builder[AwsCredentials](credentials.build())
      expiration.foreach { e =>
        result.staleTime(e.minus(ContainerCredentials.Stale)).prefetchTime(e.minus(ContainerCredentials.Prefetch))
      }
      result.build()
    } catch {
      case e: SdkClientException => throw e
      case NonFatal(e) =>
        throw SdkClientException.create(
          s"The container credentials endpoint $uri answered with no credentials it could read: " +
            e.getClass.getSimpleName)
    }
  }

  /** One request to `target`, then `retriesLeft` more after a 5xx or an I/O error: the answer's body. */
  private def attempt(target: URI, retriesLeft: Int): String = {
    val outcome =
      try {
        val connection = target.toURL.openConnection().asInstanceOf[HttpURLConnection]
        try {
          connection.setInstanceFollowRedirects(false)
          connection.setConnectTimeout(ContainerCredentials.Timeout.toMillis.toInt)
          connection.setReadTimeout(ContainerCredentials.Timeout.toMillis.toInt)
          connection.setRequestProperty("Accept", "application/json")
          tokenFile.foreach(f =>
            connection.setRequestProperty("Authorization",
              TokenFile.read(f, "container authorization token", KinesisOptions.ContainerAuthorizationTokenFile)))
          val status = connection.getResponseCode
          if (status == 200) Right(new String(connection.getInputStream.readAllBytes(), UTF_8))
          else Left((status, None))
        } finally connection.disconnect()
      } catch {
        case e: SdkClientException => throw e
        case e: IOException => Left((0, Some(e)))
      }
    outcome match {
      case Right(body) => body
      case Left((status, error)) if (status >= 500 || error.isDefined) && retriesLeft > 0 =>
        Thread.sleep(ContainerCredentials.RetryPause.toMillis * (ContainerCredentials.MaxRetries - retriesLeft + 1))
        attempt(target, retriesLeft - 1)
      case Left((status, None)) =>
        throw SdkClientException.create(
          s"The container credentials endpoint $uri answered HTTP $status" +
            (if (status >= 500) s" (tried ${ContainerCredentials.MaxRetries + 1} times)" else "") +
            "; check that the pod or task has a role (EKS Pod Identity association, ECS task role) and that the " +
            "authorization token file is current.")
      case Left((_, Some(e))) =>
        throw SdkClientException.builder()
          .message(s"Cannot fetch credentials from the container credentials endpoint $uri " +
            s"(tried ${ContainerCredentials.MaxRetries + 1} times): ${e.getClass.getSimpleName}")
          .cause(e).build()
    }
  }
}

private[sparkkinesis] object ContainerCredentials {

  val Timeout: Duration = Duration.ofSeconds(5)

  /** Tries after the first, for an answer of 5xx or an I/O error (the SDK's provider tries as often). */
  val MaxRetries = 5

  /** The pause before the n-th retry is n times this. */
  val RetryPause: Duration = Duration.ofMillis(100)

  /** Credentials this close to their expiry are fetched again before use. */
  val Stale: Duration = Duration.ofMinutes(1)

  /** Credentials this close to their expiry are fetched again in the background. */
  val Prefetch: Duration = Duration.ofMinutes(5)

  /** The addresses plain HTTP may go to: loopback, and the link-local endpoints of ECS and EKS Pod Identity. */
  private val LinkLocal = Set("169.254.170.2", "169.254.170.23", "fd00:ec2:0:0:0:0:0:23")

  /**
   * Why `uri` cannot be a container credentials endpoint, if it cannot: the same rule as the SDK's, so the
   * credentials never travel unencrypted off the machine (https anywhere, http to loopback or to ECS's and EKS Pod
   * Identity's link-local addresses only). Checked when the query is defined and again at every fetch ([[target]]).
   */
  def problem(uri: String): Option[String] =
    Try(URI.create(uri)).toOption.filter(u => u.getScheme != null && u.getHost != null) match {
      case None => Some("an absolute http or https URL such as http://169.254.170.23/v1/credentials")
      case Some(u) => plainHttpAddress(u).left.toOption
    }

  /**
   * Where a fetch connects: `uri` itself over https; over http, `uri` with its host replaced by the address checked
   * just now, so that the request goes to exactly that address.
   */
  private[aws] def target(uri: URI): URI =
    plainHttpAddress(uri) match {
      case Right(None) => uri
      case Right(Some(address)) =>
        val host = address match {
          case v6: Inet6Address => s"[${v6.getHostAddress.takeWhile(_ != '%')}]"
          case v4 => v4.getHostAddress
        }
        new URI(uri.getScheme, uri.getUserInfo, host, uri.getPort, uri.getPath, uri.getQuery, uri.getFragment)
      case Left(expected) =>
        throw SdkClientException.create(
          s"The container credentials endpoint $uri is not allowed now: its host must resolve to $expected.")
    }

  /** None for https; Some(address) for http to an allowed address; Left(what is expected) otherwise. */
  private def plainHttpAddress(u: URI): Either[String, Option[InetAddress]] =
    if (u.getScheme.equalsIgnoreCase("https")) Right(None)
    else if (u.getScheme.equalsIgnoreCase("http")) {
      val host = u.getHost.stripPrefix("[").stripSuffix("]")
      val addresses = Try(InetAddress.getAllByName(host).toSeq).getOrElse(Nil)
      if (addresses.nonEmpty && addresses.forall(a => a.isLoopbackAddress || LinkLocal(a.getHostAddress)))
        Right(Some(addresses.head))
      else
        Left("an https URL, or an http URL of a loopback address or of the ECS or EKS Pod Identity agent " +
          "(169.254.170.2, 169.254.170.23, [fd00:ec2::23])")
    } else Left("an http or https URL")
}
