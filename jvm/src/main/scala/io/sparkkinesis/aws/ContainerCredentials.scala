package io.sparkkinesis.aws

import java.net.{HttpURLConnection, InetAddress, URI}
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Paths}
import java.time.{Duration, Instant}

import scala.util.Try
import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.ObjectMapper
import software.amazon.awssdk.auth.credentials.{AwsCredentials, AwsCredentialsProvider, AwsSessionCredentials}
import software.amazon.awssdk.core.exception.SdkClientException
import software.amazon.awssdk.utils.SdkAutoCloseable
import software.amazon.awssdk.utils.cache.{CachedSupplier, NonBlocking, RefreshResult}

/**
 * Credentials from a container credentials endpoint (ECS task roles, EKS Pod Identity) at a URI the options name,
 * with the `Authorization` header read from a token file at every refresh (EKS Pod Identity rotates it). The SDK's
 * own provider takes the URI and the token file from the process's environment only, the same for every client of
 * the JVM, so the connector fetches them itself. Fetched again [[ContainerCredentials.Prefetch]] before they expire,
 * in the background. Errors name the endpoint and the HTTP status, never the token or the answer.
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
    val connection = uri.toURL.openConnection().asInstanceOf[HttpURLConnection]
    try {
      connection.setConnectTimeout(ContainerCredentials.Timeout.toMillis.toInt)
      connection.setReadTimeout(ContainerCredentials.Timeout.toMillis.toInt)
      connection.setRequestProperty("Accept", "application/json")
      tokenFile.foreach(f => connection.setRequestProperty("Authorization", ContainerCredentials.readToken(f)))
      val status = connection.getResponseCode
      if (status != 200)
        throw SdkClientException.create(
          s"The container credentials endpoint $uri answered HTTP $status; check that the pod or task has a role " +
            "(EKS Pod Identity association, ECS task role) and that the authorization token file is current.")
      val body = json.readTree(new String(connection.getInputStream.readAllBytes(), UTF_8))
      def field(name: String): String = Option(body.get(name)).map(_.asText()).filter(_.nonEmpty).getOrElse(
        throw SdkClientException.create(s"The container credentials endpoint $uri answered without '$name'."))
      val expiration = Option(body.get("Expiration")).map(e => Instant.parse(e.asText()))
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
        throw SdkClientException.builder()
          .message(
            s"Cannot fetch credentials from the container credentials endpoint $uri: ${e.getClass.getSimpleName}")
          .cause(if (e.isInstanceOf[java.io.IOException]) e else null).build()
    } finally connection.disconnect()
  }
}

private[sparkkinesis] object ContainerCredentials {

  val Timeout: Duration = Duration.ofSeconds(5)

  /** Credentials this close to their expiry are fetched again before use. */
  val Stale: Duration = Duration.ofMinutes(1)

  /** Credentials this close to their expiry are fetched again in the background. */
  val Prefetch: Duration = Duration.ofMinutes(5)

  /** The addresses plain HTTP may go to: loopback, and the link-local endpoints of ECS and EKS Pod Identity. */
  private val LinkLocal = Set("169.254.170.2", "169.254.170.23", "fd00:ec2:0:0:0:0:0:23")

  /**
   * Why `uri` cannot be a container credentials endpoint, if it cannot: the same rule as the SDK's, so the
   * credentials never travel unencrypted off the machine (https anywhere, http to loopback or to ECS's and EKS Pod
   * Identity's link-local addresses only).
   */
  def problem(uri: String): Option[String] = {
    val parsed = Try(URI.create(uri)).toOption.filter(u => u.getScheme != null && u.getHost != null)
    parsed match {
      case None => Some("an absolute http or https URL such as http://169.254.170.23/v1/credentials")
      case Some(u) if u.getScheme.equalsIgnoreCase("https") => None
      case Some(u) if u.getScheme.equalsIgnoreCase("http") =>
        val host = u.getHost.stripPrefix("[").stripSuffix("]")
        val addresses = Try(InetAddress.getAllByName(host).toSeq).getOrElse(Nil)
        if (addresses.nonEmpty && addresses.forall(a => a.isLoopbackAddress || LinkLocal(a.getHostAddress))) None
        else Some("an https URL, or an http URL of a loopback address or of the ECS or EKS Pod Identity agent " +
          "(169.254.170.2, 169.254.170.23, [fd00:ec2::23])")
      case Some(_) => Some("an http or https URL")
    }
  }

  private def readToken(file: String): String =
    try new String(Files.readAllBytes(Paths.get(file)), UTF_8).trim
    catch {
      case NonFatal(e) =>
        throw SdkClientException.create(
          s"Cannot read the container authorization token file (option 'containerAuthorizationTokenFile'): " +
            e.getClass.getSimpleName)
    }
}
