package io.sparkkinesis.aws

import java.io.{IOException, InputStream}
import java.net.URI
import java.time.Duration

import scala.util.Try

import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider
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
 * SigV4-signed POSTs to one AWS service over the SDK's small HTTP client, with a connection's region, credentials
 * and endpoint: for the service the connector calls without its SDK module ([[GlueRegistryClient]]: four calls, for
 * which the SDK's Glue client would add a 10 MB jar to every artifact). One attempt
 * per call (the callers retry, or wait for their next turn); an I/O failure comes back as an SdkClientException.
 */
private[sparkkinesis] final class SignedPost private (
    endpoint: URI,
    service: String,
    region: String,
    credentials: AwsCredentialsProvider,
    http: SdkHttpClient,
    closeables: Seq[AutoCloseable])
  extends AutoCloseable {

  private val signer = AwsV4HttpSigner.create()

  /**
   * Posts `body` with `headers` for `operation` (named in errors): the answer's status and its body as `read` reads
   * it (None for an answer without a body; `read` closes the stream).
   */
  def apply[A](operation: String, headers: Seq[(String, String)], body: Array[Byte])(
      read: Option[InputStream] => A): (Int, A) = {
    val unsigned = headers.foldLeft(SdkHttpRequest.builder().method(SdkHttpMethod.POST).uri(endpoint)) {
      case (b, (name, value)) => b.putHeader(name, value)
    }.build()
    val identity: AwsCredentialsIdentity = credentials.resolveCredentials()
    val signed = signer.sign(SignRequest.builder(identity).request(unsigned)
        .payload(ContentStreamProvider.fromByteArray(body))
        .putProperty(AwsV4FamilyHttpSigner.SERVICE_SIGNING_NAME, service)
        .putProperty(AwsV4HttpSigner.REGION_NAME, region)
        .build())
    try {
      val response = http.prepareRequest(HttpExecuteRequest.builder().request(signed.request())
          .contentStreamProvider(signed.payload().orElse(null)).build()).call()
      val stream = response.responseBody()
      (response.httpResponse().statusCode(), read(if (stream.isPresent) Some(stream.get) else None))
    } catch {
      case e: IOException => throw SdkClientException.builder().message(s"$operation: ${e.getMessage}").cause(e).build()
    }
  }

  override def close(): Unit = closeables.foreach(c => Try(c.close()))
}

private[sparkkinesis] object SignedPost {

  /** How long one call may wait for an answer. */
  val SocketTimeout: Duration = Duration.ofSeconds(30)

  /**
   * Posts to `service` (its endpoint prefix is its signing name: `glue`) for `c`: at `c`'s endpoint URL,
   * else the region's endpoint with `c`'s variants (FIPS, dual-stack), signed with `c`'s credentials.
   */
  def apply(c: AwsConnection, service: EndpointVariants.Service): SignedPost = {
    // The signer logs canonical requests (a session token among their headers) at DEBUG: kept out, as for Kinesis.
    SignerLogGuard()
    val (credentials, closeables) = CredentialProviders.of(c.credentials, c.region, c.endpoints)
    val http = UrlConnectionHttpClient.builder().connectionTimeout(KinesisClients.ConnectTimeout)
      .socketTimeout(SocketTimeout).build()
    val endpoint =
      URI.create(c.endpointUrl.getOrElse(s"https://${EndpointVariants.host(service, c.region, c.endpoints)}"))
    new SignedPost(endpoint, service.prefix, c.region, credentials, http, http +: closeables)
  }
}
