package io.sparkkinesis.writer

import java.net.URI
import java.nio.charset.StandardCharsets
import java.util.concurrent.{CompletableFuture, ConcurrentLinkedQueue, CountDownLatch, TimeUnit}
import java.util.concurrent.atomic.{AtomicBoolean, AtomicInteger}

import io.sparkkinesis.compat.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

import software.amazon.awssdk.auth.credentials.{AwsBasicCredentials, AwsCredentials, AwsCredentialsProvider}
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy
import software.amazon.awssdk.core.client.config.ClientOverrideConfiguration
import software.amazon.awssdk.http.Protocol
import software.amazon.awssdk.http.nio.netty.NettyNioAsyncHttpClient
import software.amazon.awssdk.regions.Region
import software.amazon.awssdk.services.kinesis.KinesisAsyncClient
import software.amazon.awssdk.services.kinesis.model.{PutRecordsRequest, PutRecordsResponse, PutRecordsResultEntry}

import io.sparkkinesis.aws.KinesisClients
import io.sparkkinesis.writer.SinkTestStreams._
import io.sparkkinesis.testing.{Integration, LocalKinesisServers, TestStreams}
import io.sparkkinesis.testing.TestStreams.{connection, readAll}

/**
 * `maxRecordDelay` ticks (issue 30, item 5): a tick that blocks delays neither the other writers' ticks nor its own
 * task's writes, and once `abort` returns no tick of the writer sends anything.
 */
@Integration
class SendTickerIsolationSuite extends AnyFunSuite with LocalKinesisServers {
  private def server = kinesalite

  /** Credentials whose first resolve blocks (as a refresh from a slow STS would) until released or `blockMillis`. */
  private final class BlockingCredentials(blockMillis: Long) extends AwsCredentialsProvider {
    val entered = new CountDownLatch(1)
    val release = new CountDownLatch(1)
    private val first = new AtomicBoolean(true)
    @volatile var firstReturned = false

    override def resolveCredentials(): AwsCredentials = {
      if (first.getAndSet(false)) {
        entered.countDown()
        release.await(blockMillis, TimeUnit.MILLISECONDS)
        firstReturned = true
      }
      AwsBasicCredentials.create("local-test-key", "local-test-secret")
    }
  }

  /** A real SDK client of the local server, signing with `credentials` (the options cannot name a provider). */
  private def clientWith(credentials: AwsCredentialsProvider): KinesisAsyncClient =
    KinesisClients.withCborSetting(server.cborEnabled) {
      KinesisAsyncClient.builder()
        .region(Region.of(TestStreams.Region))
        .endpointOverride(URI.create(server.endpoint))
        .credentialsProvider(credentials)
        .httpClientBuilder(NettyNioAsyncHttpClient.builder().protocol(Protocol.HTTP1_1))
        .overrideConfiguration(
          ClientOverrideConfiguration.builder().retryStrategy(AwsRetryStrategy.doNotRetry()).build())
        .build()
    }

  private def writer(options: SinkOptions): KinesisDataWriter =
    new KinesisDataWriter(options, SinkSchema.of(textSchema, options.partitionKeyColumn), 0, 1L)

  /** Polls `condition` (each poll a few calls to the server) until it holds or `seconds` pass. */
  private def awaitCondition(seconds: Int)(condition: => Boolean): Boolean = {
    val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds)
    var ok = condition
    while (!ok && System.nanoTime() < deadline) {
      Thread.sleep(20)
      ok = condition
    }
    ok
  }

  test("a writer whose tick blocks on its credentials delays neither another writer's ticks nor its own writes") {
    val streamA = TestStreams.freshStream(server, "tick-a", 1)
    val streamB = TestStreams.freshStream(server, "tick-b", 1)
    val credentials = new BlockingCredentials(blockMillis = 10000)
    val clientA = clientWith(credentials)
    val delay = Map("maxRecordDelay" -> "50ms")
    val a = writer(options(server, streamA, FixedClientFactory(clientA), delay))
    val b = writer(options(server, streamB, FixedClientFactory(KinesisClients.async(connection(server), 16)), delay))
    try {
      a.write(row("a0", "k"))
      assert(credentials.entered.await(30, TimeUnit.SECONDS), "writer A's tick never asked for its credentials")

      // A's tick now waits for its credentials; B's ticks must go on meanwhile.
      val bRecords = (0 until 5).map(i => s"b$i")
      bRecords.foreach(d => b.write(row(d, s"key-$d")))
      val arrived = awaitCondition(5)(readAll(server, streamB).map(_.text).sorted == bRecords)
      val aStillBlocked = !credentials.firstReturned
      assert(arrived, "writer B's records did not arrive within 5 s (maxRecordDelay 50ms) while A's tick was blocked")
      assert(aStillBlocked, "B's records arrived only after A's credentials came")

      // A's own task is not held up by its blocked tick either.
      val wrote = new CountDownLatch(1)
      val writing = new Thread(() => { a.write(row("a1", "k")); wrote.countDown() })
      writing.start()
      assert(wrote.await(5, TimeUnit.SECONDS), "writer A's write() waited for its blocked tick")
      assert(!credentials.firstReturned)

      credentials.release.countDown()
      a.commit()
      b.commit()
      // Two calls of the same key without ordering=perKey: either may land first.
      assert(readAll(server, streamA).map(_.text).sorted == Seq("a0", "a1"))
    } finally {
      credentials.release.countDown()
      a.close()
      b.close()
      clientA.close()
    }
  }

  /**
   * PutRecords as a client that resolves credentials on the calling thread sees it: the first call waits there
   * until released, and only then leaves (is recorded, with whether `abortReturned` was set by then). That call's
   * records all come back throttled, so the writer holds retries that a later tick would send.
   */
  private final class GatedClient(abortReturned: AtomicBoolean) extends KinesisAsyncClient {
    val firstEntered = new CountDownLatch(1)
    val release = new CountDownLatch(1)
    private val calls = new AtomicInteger
    val sentAfterAbort = new ConcurrentLinkedQueue[String]()
    val sent = new AtomicInteger

    override def serviceName(): String = "kinesis"
    override def close(): Unit = ()

    override def putRecords(request: PutRecordsRequest): CompletableFuture[PutRecordsResponse] = {
      val n = calls.getAndIncrement()
      if (n == 0) {
        firstEntered.countDown()
        release.await(30, TimeUnit.SECONDS)
      }
      val entries = request.records().asScala.toSeq
      sent.incrementAndGet()
      if (abortReturned.get())
        entries.foreach(e => sentAfterAbort.add(new String(e.data().asByteArrayUnsafe(), StandardCharsets.UTF_8)))
      val results = entries.map { _ =>
        if (n == 0)
          PutRecordsResultEntry.builder().errorCode("ProvisionedThroughputExceededException").errorMessage("test")
            .build()
        else PutRecordsResultEntry.builder().shardId("shardId-000000000000").sequenceNumber(s"$n").build()
      }
      CompletableFuture.completedFuture(PutRecordsResponse.builder().records(results.asJava)
          .failedRecordCount(results.count(_.errorCode() != null)).build())
    }
  }

  test("abort racing a tick: once abort returns, no tick of the writer sends anything") {
    val rounds = 10
    val aborted = (0 until rounds).map { round =>
      val abortReturned = new AtomicBoolean(false)
      val client = new GatedClient(abortReturned)
      val w = writer(options(server, "s", FixedClientFactory(client), Map("maxRecordDelay" -> "20ms")))
      (0 until 3).foreach(i => w.write(row(s"r$round-$i", s"k$i")))
      assert(client.firstEntered.await(30, TimeUnit.SECONDS), s"round $round: no tick made a call")

      // A tick is inside its call; abort on another thread while it is, then let the call go on.
      val aborting = new Thread(() => { w.abort(); abortReturned.set(true) })
      aborting.start()
      // Alternate: release at once (abort may not have begun), or once abort waits (it has begun).
      if (round % 2 == 1)
        awaitCondition(10)(Set(Thread.State.WAITING, Thread.State.TIMED_WAITING, Thread.State.BLOCKED,
            Thread.State.TERMINATED).contains(aborting.getState))
      client.release.countDown()
      aborting.join(TimeUnit.SECONDS.toMillis(60))
      assert(!aborting.isAlive, s"round $round: abort did not return")
      w.close()
      assert(client.sentAfterAbort.isEmpty,
        s"round $round: sent after abort returned: ${client.sentAfterAbort.asScala.mkString(", ")}")
      client
    }
    // The throttled records would be due again within a few hundred ms and a live tick would send them; nothing
    // can signal a tick that does not come, so give them a bounded time (first retries wait 50 to 100 ms).
    Thread.sleep(1000)
    aborted.zipWithIndex.foreach { case (client, round) =>
      assert(client.sentAfterAbort.isEmpty,
        s"round $round: sent after abort returned: ${client.sentAfterAbort.asScala.mkString(", ")}")
      assert(client.sent.get() == 1, s"round $round: ${client.sent.get()} calls")
    }
  }
}
