package io.sparkkinesis.aws

import java.net.URI
import java.time.Duration
import java.util.concurrent.ConcurrentHashMap

import software.amazon.awssdk.auth.credentials._
import software.amazon.awssdk.core.client.config.ClientOverrideConfiguration
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy
import software.amazon.awssdk.http.Protocol
import software.amazon.awssdk.http.nio.netty.NettyNioAsyncHttpClient
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient
import software.amazon.awssdk.regions.Region
import software.amazon.awssdk.services.kinesis.{KinesisAsyncClient, KinesisClient}
import software.amazon.awssdk.services.sts.StsClient
import software.amazon.awssdk.services.sts.auth.StsAssumeRoleCredentialsProvider
import software.amazon.awssdk.services.sts.model.AssumeRoleRequest

/**
 * Builds and caches SDK clients, one per distinct connection per JVM (clients are thread-safe and costly to
 * build: the async one owns a Netty event loop). Used on the driver for planning and on executors for
 * reading and writing.
 */
private[sparkkinesis] object KinesisClients {
  private val syncClients = new ConcurrentHashMap[AwsConnection, KinesisClient]()
  private val asyncClients = new ConcurrentHashMap[(AwsConnection, Int), KinesisAsyncClient]()

  sys.addShutdownHook(closeAll())

  def sync(conn: AwsConnection): KinesisClient =
    syncClients.computeIfAbsent(conn,
      c =>
        withCborSetting(c.cborEnabled) {
          SignerLogGuard()
          val b = KinesisClient.builder()
            .region(Region.of(c.region))
            .credentialsProvider(credentialsProvider(c.credentials, c.region))
            .httpClientBuilder(UrlConnectionHttpClient.builder()
                .connectionTimeout(Duration.ofSeconds(10)).socketTimeout(Duration.ofSeconds(30)))
            .overrideConfiguration(overrides)
          c.endpointUrl.foreach(u => b.endpointOverride(URI.create(u)))
          b.build()
        })

  def async(conn: AwsConnection, maxConcurrency: Int): KinesisAsyncClient =
    asyncClients.computeIfAbsent((conn, maxConcurrency),
      {
        case (c, n) => withCborSetting(c.cborEnabled) {
            SignerLogGuard()
            val b = KinesisAsyncClient.builder()
              .region(Region.of(c.region))
              .credentialsProvider(credentialsProvider(c.credentials, c.region))
              // PutRecords over HTTP/1.1: HTTP/2 brings nothing to request/response calls, and plain-HTTP local
              // servers (kinesalite, LocalStack) do not speak h2c. Enhanced fan-out will get its own HTTP/2 client.
              .httpClientBuilder(NettyNioAsyncHttpClient.builder()
                  .protocol(Protocol.HTTP1_1)
                  .maxConcurrency(math.max(n, 2))
                  .connectionTimeout(Duration.ofSeconds(10))
                  .readTimeout(Duration.ofSeconds(60)))
              .overrideConfiguration(overrides)
            c.endpointUrl.foreach(u => b.endpointOverride(URI.create(u)))
            b.build()
          }
      })

  /**
   * The connector does all retrying itself (throttling, 5xx and I/O errors, with budgets, pacing and metrics it can
   * report), so the SDK makes exactly one attempt per call.
   */
  private def overrides: ClientOverrideConfiguration =
    ClientOverrideConfiguration.builder()
      .retryStrategy(AwsRetryStrategy.doNotRetry())
      .apiCallTimeout(Duration.ofMinutes(2))
      .build()

  private def credentialsProvider(c: CredentialsConfig, region: String): AwsCredentialsProvider = c match {
    case CredentialsConfig.StaticKeys(id, secret, None) =>
      StaticCredentialsProvider.create(AwsBasicCredentials.create(id, secret))
    case CredentialsConfig.StaticKeys(id, secret, Some(token)) =>
      StaticCredentialsProvider.create(AwsSessionCredentials.create(id, secret, token))
    case CredentialsConfig.DefaultChain => DefaultCredentialsProvider.builder().build()
    case CredentialsConfig.Profile(name) => ProfileCredentialsProvider.builder().profileName(name).build()
    case r: CredentialsConfig.AssumeRole =>
      val sts = StsClient.builder()
        .region(Region.of(region))
        .credentialsProvider(credentialsProvider(r.base, region))
        .httpClientBuilder(UrlConnectionHttpClient.builder())
      r.stsEndpointUrl.foreach(u => sts.endpointOverride(URI.create(u)))
      val request = AssumeRoleRequest.builder().roleArn(r.roleArn).roleSessionName(r.sessionName)
      r.externalId.foreach(request.externalId)
      StsAssumeRoleCredentialsProvider.builder().stsClient(sts.build()).refreshRequest(request.build()).build()
  }

  /**
   * The SDK takes its CBOR switch from the system property `aws.cborEnabled` when a client is built, so the
   * property is set for the duration of the build only (under a lock): each client keeps its own setting.
   */
  private def withCborSetting[T](enabled: Boolean)(build: => T): T = CborLock.synchronized {
    val property = "aws.cborEnabled"
    val previous = Option(System.getProperty(property))
    if (!enabled) System.setProperty(property, "false")
    try build
    finally if (!enabled) previous.fold(System.clearProperty(property))(System.setProperty(property, _))
  }
  private object CborLock

  def closeAll(): Unit = {
    syncClients.values().forEach(c => c.close())
    syncClients.clear()
    asyncClients.values().forEach(c => c.close())
    asyncClients.clear()
  }
}
