package io.sparkkinesis.aws

import java.io.IOException
import java.net.{URI, URLEncoder}
import java.nio.charset.StandardCharsets.UTF_8
import java.time.Duration

import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider
import software.amazon.awssdk.awscore.exception.{AwsErrorDetails, AwsServiceException}
import software.amazon.awssdk.core.exception.SdkClientException
import software.amazon.awssdk.http.{
  ContentStreamProvider,
  HttpExecuteRequest,
  SdkHttpClient,
  SdkHttpMethod,
  SdkHttpRequest
}
import software.amazon.awssdk.http.auth.aws.signer.{AwsV4FamilyHttpSigner, AwsV4HttpSigner}
import software.amazon.awssdk.http.auth.spi.signer.SignRequest
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient
import software.amazon.awssdk.identity.spi.AwsCredentialsIdentity

/**
 * The one CloudWatch call the connector makes, PutMetricData, on the driver for a query's metrics publisher
 * (`cloudWatchMetrics=true`): sent as a request of CloudWatch's query API (form parameters, `Action` and
 * `Version`), signed with the SDK's SigV4 signer for the service `monitoring`, over the SDK's small HTTP client, with
 * the region and credentials of the query's connection and its endpoint the connection's (`cloudWatchEndpointUrl`,
 * else the region's). As with [[GlueRegistryClient]], the SDK's CloudWatch client would do the same for one call with
 * a jar of its own in every artifact. One attempt per call: the publisher waits for its next interval instead.
 * An error answer comes back as an [[AwsServiceException]] with the service's error code and status.
 */
private[sparkkinesis] final class CloudWatchClient(
    connection: AwsConnection,
    credentials: AwsCredentialsProvider,
    http: SdkHttpClient,
    closeables: Seq[AutoCloseable])
  extends AutoCloseable {

  private val endpoint: URI =
    URI.create(connection.endpointUrl.getOrElse(
        s"https://${EndpointVariants.host("monitoring", connection.region, connection.endpoints)}"))
  private val signer = AwsV4HttpSigner.create()

  /** PutMetricData with `parameters` (`Namespace`, `MetricData.member.N...`), which the caller encodes. */
  def putMetricData(parameters: Seq[(String, String)]): Unit = {
    val form = (Seq("Action" -> "PutMetricData", "Version" -> CloudWatchClient.ApiVersion) ++ parameters)
      .map { case (k, v) => s"${encode(k)}=${encode(v)}" }.mkString("&").getBytes(UTF_8)
    val unsigned = SdkHttpRequest.builder().method(SdkHttpMethod.POST).uri(endpoint)
      .putHeader("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
      .build()
    val identity: AwsCredentialsIdentity = credentials.resolveCredentials()
    val signed = signer.sign(SignRequest.builder(identity).request(unsigned)
        .payload(ContentStreamProvider.fromByteArray(form))
        .putProperty(AwsV4FamilyHttpSigner.SERVICE_SIGNING_NAME, "monitoring")
        .putProperty(AwsV4HttpSigner.REGION_NAME, connection.region)
        .build())
    val (status, body) =
      try {
        val response = http.prepareRequest(HttpExecuteRequest.builder().request(signed.request())
            .contentStreamProvider(signed.payload().orElse(null)).build()).call()
        val stream = response.responseBody()
        val text = if (stream.isPresent) {
          val in = stream.get
          try new String(in.readAllBytes(), UTF_8)
          finally in.close()
        } else ""
        (response.httpResponse().statusCode(), text)
      } catch {
        case e: IOException =>
          throw SdkClientException.builder().message(s"PutMetricData: ${e.getMessage}").cause(e).build()
      }
    if (status / 100 != 2) {
      val code = CloudWatchClient.element(body, "Code").getOrElse("UnknownError")
      val message = CloudWatchClient.element(body, "Message").getOrElse(s"HTTP $status")
      throw AwsServiceException.builder().statusCode(status).message(message)
        .awsErrorDetails(AwsErrorDetails.builder().serviceName("CloudWatch").errorCode(code).errorMessage(message)
            .build()).build()
    }
  }

  private def encode(s: String): String = URLEncoder.encode(s, "UTF-8").replace("+", "%20")

  override def close(): Unit = closeables.foreach(c => scala.util.Try(c.close()))
}

private[sparkkinesis] object CloudWatchClient {

  /** The version of CloudWatch's query API. */
  val ApiVersion = "2010-08-01"

  /** How long one call may wait for an answer. */
  val SocketTimeout: Duration = Duration.ofSeconds(30)

  /** A client for `c` (its `endpointUrl` CloudWatch's), closed with what was built for its credentials. */
  def apply(c: AwsConnection): CloudWatchClient = {
    // The signer logs canonical requests (a session token among their headers) at DEBUG: kept out, as for Kinesis.
    SignerLogGuard()
    val (credentials, closeables) = CredentialProviders.of(c.credentials, c.region, c.endpoints)
    val http = UrlConnectionHttpClient.builder().connectionTimeout(KinesisClients.ConnectTimeout)
      .socketTimeout(SocketTimeout).build()
    new CloudWatchClient(c, credentials, http, http +: closeables)
  }

  /** The text of the first `<name>` element of an error answer (CloudWatch's query API answers in XML). */
  private def element(xml: String, name: String): Option[String] =
    s"(?s)<$name>(.*?)</$name>".r.findFirstMatchIn(xml).map(_.group(1).trim).filter(_.nonEmpty)
}
