package io.sparkkinesis.aws

import java.time.Duration
import java.util.concurrent.{
  Executor,
  Executors,
  LinkedBlockingQueue,
  ScheduledExecutorService,
  ThreadFactory,
  ThreadPoolExecutor,
  TimeUnit
}

import software.amazon.awssdk.awscore.retry.AwsRetryStrategy
import software.amazon.awssdk.core.client.config.{
  ClientAsyncConfiguration,
  ClientOverrideConfiguration,
  SdkAdvancedAsyncClientOption
}
import software.amazon.awssdk.http.Protocol
import software.amazon.awssdk.http.nio.netty.{NettyNioAsyncHttpClient, SdkEventLoopGroup}
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient
import software.amazon.awssdk.regions.Region
import software.amazon.awssdk.awscore.client.builder.AwsClientBuilder
import software.amazon.awssdk.services.cloudwatch.{CloudWatchClient, CloudWatchClientBuilder}
import software.amazon.awssdk.services.dynamodb.streams.{DynamoDbStreamsClient, DynamoDbStreamsClientBuilder}
import software.amazon.awssdk.services.kinesis.{
  KinesisAsyncClient,
  KinesisAsyncClientBuilder,
  KinesisClient,
  KinesisClientBuilder
}

import io.sparkkinesis.runtime.DaemonThreads

/**
 * Builds and caches SDK clients per JVM, one per distinct connection, used on the driver for planning and on
 * executors for reading and writing, and the driver's CloudWatch client (PutMetricData of `cloudWatchMetrics`). The caches are bounded ([[ClientCache]]: at most `MaxClients` of each kind,
 * the least recently used closed when a new connection passes that), so an application that rotates keys or
 * changes settings does not gather clients, sockets and threads. Every async client shares one Netty event loop
 * group, so their threads do not add up either.
 */
private[sparkkinesis] object KinesisClients {

  /** Clients of each kind (sync, async) one JVM keeps; connections beyond that replace the least recently used. */
  val MaxClients = 16

  /**
   * How long opening a connection may take (a TCP handshake, even across continents, takes far less), so an
   * endpoint that does not answer at all is found out within seconds ([[RetryPolicy.FirstContact]]).
   */
  val ConnectTimeout: Duration = Duration.ofSeconds(3)

  /** How long one call may take in all, unless a kind of client says otherwise. */
  val CallTimeout: Duration = Duration.ofMinutes(2)

  /** How long a client that left the cache stays open for the calls already under way on it. */
  val CloseDelayMillis = 30000L

  private val syncClients = new ClientCache[AwsConnection, KinesisClient](MaxClients, CloseDelayMillis, buildSync)
  private val asyncClients =
    new ClientCache[(AwsConnection, Int), KinesisAsyncClient](MaxClients, CloseDelayMillis, buildAsync)
  private val fanOutClients =
    new ClientCache[AwsConnection, KinesisAsyncClient](MaxClients, CloseDelayMillis, buildFanOut)
  private val cloudWatchClients =
    new ClientCache[AwsConnection, CloudWatchClient](MaxClients, CloseDelayMillis, buildCloudWatch)
  private val dynamoDbStreamsClients =
    new ClientCache[AwsConnection, DynamoDbStreamsClient](MaxClients, CloseDelayMillis, buildDynamoDbStreams)

  /**
   * How long one PutMetricData call may take in all, the SDK's retries included: less than the publishers' interval
   * of a minute, so that a CloudWatch that does not answer holds the publishers' one thread for one tick at most.
   */
  val CloudWatchCallTimeout: Duration = Duration.ofSeconds(45)

  /**
   * How long one SubscribeToShard call may last: the service ends a subscription after 5 minutes, so the SDK's
   * own call timeout (2 minutes for other calls) must not cut it first.
   */
  val SubscriptionTimeout: Duration = Duration.ofMinutes(6)

  /** Subscriptions (HTTP/2 streams) one fan-out client may hold at once, over however many connections. */
  val MaxSubscriptions = 10000

  private val cores = math.max(2, Runtime.getRuntime.availableProcessors())

  /**
   * Threads every client of this JVM shares, all daemon threads: the Netty event loops of the async clients, the
   * timer the SDK uses for call timeouts, and the threads that complete async calls. Left to itself the SDK gives
   * each client its own of each, so threads would grow with the number of clients.
   */
  private lazy val eventLoops: SdkEventLoopGroup =
    SdkEventLoopGroup.builder().numberOfThreads(cores).threadFactory(daemon("kinesis-netty")).build()
  private lazy val timers: ScheduledExecutorService =
    Executors.newScheduledThreadPool(math.min(cores, 4), daemon("kinesis-sdk-timer"))
  private lazy val completions: Executor = {
    val pool = new ThreadPoolExecutor(cores, cores, 60L, TimeUnit.SECONDS, new LinkedBlockingQueue[Runnable](),
      daemon("kinesis-sdk-completion"))
    pool.allowCoreThreadTimeOut(true)
    pool
  }

  private def daemon(prefix: String): ThreadFactory = DaemonThreads.factory(prefix, numbered = true)

  private object CborLock

  sys.addShutdownHook(closeAll())

  def sync(conn: AwsConnection): KinesisClient = substituted(substitutes, conn).getOrElse(syncClients(conn))

  /**
   * Clients that stand in for the SDK's at an endpoint URL: an in-process fake service a test or a
   * benchmark registers (`testing/FakeKinesis`), so the connector's own cost shows without an HTTP server's. Empty
   * in production; the endpoint URL of a connection chooses it, so the code under test is unchanged.
   */
  private val substitutes = new java.util.concurrent.ConcurrentHashMap[String, KinesisClient]()
  private val fanOutSubstitutes = new java.util.concurrent.ConcurrentHashMap[String, KinesisAsyncClient]()

  /**
   * Answers every synchronous call to `endpointUrl` with `client`, and enhanced fan-out subscriptions with `fanOut`
   * when given, until [[withdraw]].
   */
  def substitute(endpointUrl: String, client: KinesisClient, fanOut: Option[KinesisAsyncClient] = None): Unit = {
    substitutes.put(endpointUrl, client)
    fanOut.foreach(fanOutSubstitutes.put(endpointUrl, _))
  }

  /** The client standing in at `conn`'s endpoint, if any (a map that is empty in production answers at once). */
  private def substituted[C](clients: java.util.concurrent.ConcurrentHashMap[String, C], conn: AwsConnection) =
    if (clients.isEmpty) None else conn.endpointUrl.flatMap(u => Option(clients.get(u)))

  def withdraw(endpointUrl: String): Unit = {
    substitutes.remove(endpointUrl)
    fanOutSubstitutes.remove(endpointUrl)
  }

  def async(conn: AwsConnection, maxConcurrency: Int): KinesisAsyncClient = asyncClients((conn, maxConcurrency))

  /** The HTTP/2 client that enhanced fan-out subscriptions (SubscribeToShard) use, one per connection. */
  def fanOut(conn: AwsConnection): KinesisAsyncClient =
    substituted(fanOutSubstitutes, conn).getOrElse(fanOutClients(conn))

  /** Lets the synchronous client of `conn` go (a query that used it stopped); others get a new one on request. */
  def retire(conn: AwsConnection): Unit = syncClients.retire(conn)

  /** Clients cached now: (sync, async). */
  def cached: (Int, Int) = (syncClients.size, asyncClients.size)

  /** Fan-out clients cached now. */
  def cachedFanOut: Int = fanOutClients.size

  /**
   * The CloudWatch client of `conn` (its `endpointUrl` CloudWatch's: `cloudWatchEndpointUrl`), one per connection.
   * Unlike the Kinesis clients it keeps the SDK's own retries (throttling, 5xx, I/O errors; the SDK's retry mode and
   * attempts, `AWS_RETRY_MODE`/`AWS_MAX_ATTEMPTS`, apply): the publisher has no retry policy of its own beyond waiting
   * for its next tick.
   */
  def cloudWatch(conn: AwsConnection): CloudWatchClient = cloudWatchClients(conn)

  /**
   * The DynamoDB Streams client of `conn` (`format("dynamodb-streams")`; its `endpointUrl` the Streams endpoint), one
   * per connection, with the Kinesis clients' settings: the connector's own retries, the same timeouts.
   */
  def dynamoDbStreams(conn: AwsConnection): DynamoDbStreamsClient = dynamoDbStreamsClients(conn)

  /** CloudWatch clients cached now. */
  def cachedCloudWatch: Int = cloudWatchClients.size

  private def buildSync(c: AwsConnection): ClientCache.Built[KinesisClient] =
    configured[KinesisClientBuilder, KinesisClient](c,
      KinesisClient.builder()
        .httpClientBuilder(UrlConnectionHttpClient.builder()
            .connectionTimeout(ConnectTimeout).socketTimeout(Duration.ofSeconds(30))))

  private def buildAsync(key: (AwsConnection, Int)): ClientCache.Built[KinesisAsyncClient] =
    configured[KinesisAsyncClientBuilder, KinesisAsyncClient](key._1,
      KinesisAsyncClient.builder()
        // PutRecords over HTTP/1.1: HTTP/2 brings nothing to request/response calls, and plain-HTTP local
        // servers (kinesalite, LocalStack) do not speak h2c. Enhanced fan-out has its own HTTP/2 client.
        .httpClientBuilder(NettyNioAsyncHttpClient.builder()
            .eventLoopGroup(eventLoops)
            .protocol(Protocol.HTTP1_1)
            .maxConcurrency(math.max(key._2, 2))
            .connectionTimeout(ConnectTimeout)
            .readTimeout(Duration.ofSeconds(60)))
        .asyncConfiguration(ClientAsyncConfiguration.builder()
            .advancedOption(SdkAdvancedAsyncClientOption.FUTURE_COMPLETION_EXECUTOR, completions).build()))

  private def buildCloudWatch(c: AwsConnection): ClientCache.Built[CloudWatchClient] =
    configured[CloudWatchClientBuilder, CloudWatchClient](c,
      CloudWatchClient.builder()
        .httpClientBuilder(UrlConnectionHttpClient.builder()
            .connectionTimeout(ConnectTimeout).socketTimeout(Duration.ofSeconds(30))),
      callTimeout = CloudWatchCallTimeout, sdkRetries = true)

  private def buildDynamoDbStreams(c: AwsConnection): ClientCache.Built[DynamoDbStreamsClient] =
    configured[DynamoDbStreamsClientBuilder, DynamoDbStreamsClient](c,
      DynamoDbStreamsClient.builder()
        .httpClientBuilder(UrlConnectionHttpClient.builder()
            .connectionTimeout(ConnectTimeout).socketTimeout(Duration.ofSeconds(30))))

  /**
   * SubscribeToShard needs HTTP/2: over TLS (ALPN) against AWS, with prior knowledge (h2c) against a plain-HTTP
   * local endpoint. Each subscription is one HTTP/2 stream; events arrive at least every few seconds, so a read
   * timeout of a minute only fires on a dead connection (the fetcher renews silent subscriptions sooner itself).
   */
  private def buildFanOut(c: AwsConnection): ClientCache.Built[KinesisAsyncClient] =
    configured[KinesisAsyncClientBuilder, KinesisAsyncClient](c,
      KinesisAsyncClient.builder()
        .httpClientBuilder(NettyNioAsyncHttpClient.builder()
            .eventLoopGroup(eventLoops)
            .protocol(Protocol.HTTP2)
            .maxConcurrency(MaxSubscriptions)
            .connectionTimeout(ConnectTimeout)
            .readTimeout(Duration.ofSeconds(60)))
        .asyncConfiguration(ClientAsyncConfiguration.builder()
            .advancedOption(SdkAdvancedAsyncClientOption.FUTURE_COMPLETION_EXECUTOR, completions).build()),
      callTimeout = SubscriptionTimeout)

  /**
   * What every client of a connection has: region, credentials, the connector's overrides and the endpoint (its URL,
   * or the region's FIPS or dual-stack variant, [[EndpointVariants]]).
   */
  private def configured[B <: AwsClientBuilder[B, C], C](
      c: AwsConnection,
      builder: B,
      callTimeout: Duration = CallTimeout,
      sdkRetries: Boolean = false): ClientCache.Built[C] =
    withCborSetting(c.cborEnabled) {
      SignerLogGuard()
      val (credentials, closeables) = CredentialProviders.of(c.credentials, c.region, c.endpoints)
      builder.region(Region.of(c.region)).credentialsProvider(credentials).overrideConfiguration(overrides(callTimeout,
          sdkRetries))
      ClientCache.Built(c.endpoints.applyTo(builder, c.endpointUrl).build(), closeables)
    }

  /**
   * The connector does all retrying of Kinesis and STS calls itself (throttling, 5xx and I/O errors, with budgets,
   * pacing and metrics it can report), so the SDK makes exactly one attempt per call there; with `sdkRetries` (the
   * CloudWatch client) the SDK's own retry strategy stays.
   */
  private def overrides(callTimeout: Duration, sdkRetries: Boolean): ClientOverrideConfiguration = {
    val b = ClientOverrideConfiguration.builder().apiCallTimeout(callTimeout).scheduledExecutorService(timers)
    (if (sdkRetries) b else b.retryStrategy(AwsRetryStrategy.doNotRetry())).build()
  }

  /**
   * The SDK takes its CBOR switch from the system property `aws.cborEnabled` when a client is built, so the
   * property is set for the duration of the build only (under a lock): each client keeps its own setting. Tests
   * that build a client of their own (with a credentials provider the options cannot name) go through it too.
   */
  private[sparkkinesis] def withCborSetting[T](enabled: Boolean)(build: => T): T = CborLock.synchronized {
    val property = "aws.cborEnabled"
    val previous = Option(System.getProperty(property))
    if (!enabled) System.setProperty(property, "false")
    try build
    finally if (!enabled) previous.fold(System.clearProperty(property))(System.setProperty(property, _))
  }

  def closeAll(): Unit = {
    syncClients.closeAll()
    asyncClients.closeAll()
    fanOutClients.closeAll()
    cloudWatchClients.closeAll()
    dynamoDbStreamsClients.closeAll()
  }
}
