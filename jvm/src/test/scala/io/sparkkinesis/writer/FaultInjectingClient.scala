package io.sparkkinesis.writer

import java.nio.charset.StandardCharsets
import java.util.concurrent.{CompletableFuture, ConcurrentHashMap, ConcurrentLinkedQueue}
import java.util.concurrent.atomic.{AtomicInteger, AtomicLong}

import io.sparkkinesis.compat.CollectionConverters._
import scala.util.Random

import software.amazon.awssdk.services.kinesis.KinesisAsyncClient
import software.amazon.awssdk.services.kinesis.model._

/** One PutRecords call as the fake saw it; `largest`: its largest entry's bytes (partition key included). */
final case class RecordedCall(entries: Int, bytes: Long, injectedFailures: Int, largest: Long = 0L)

/**
 * A Kinesis client for sink tests: PutRecords goes through a fault layer, everything else to `delegate`
 * (a real client of a local server), or is answered in memory when there is none.
 *
 * Faults, decided per call with a seeded random generator so that runs repeat:
 *  - `entryFailureRate`: each entry fails with `entryFailureCode` (ProvisionedThroughputExceeded by default)
 *    at that rate; failed entries are NOT forwarded, so the server holds exactly the entries reported as
 *    written, as with a real partial failure;
 *  - `failEntry`: a test-chosen predicate on the entry, for deterministic faults;
 *  - `callFailure`: a whole-call error for the n-th call (0-based), e.g. a throttled or denied call;
 *  - `listShardsFailure`: the same for the n-th ListShards call (the KPL shard map's);
 *  - `staleListing`: whether the n-th ListShards call (0-based) answers with the first call's answer, as a listing
 *    that lags behind a reshard would (the local servers list a new shard at once);
 *  - `beforePutRecords`: runs before the n-th PutRecords call (0-based) goes anywhere, e.g. to reshard the stream
 *    between the writer's listing of its shards and its first call.
 * Every call is recorded (entries, bytes counting partition keys, injected failures), and so is each
 * entry's data, how often it was sent and how often it was failed. DescribeStreamSummary says the stream's maximum
 * record size is `maxRecordSizeKiB` when set (the local servers never say it, and refuse records over 1 MiB).
 */
final class FaultInjectingClient(
    delegate: Option[KinesisAsyncClient],
    seed: Long = 42L,
    @volatile var entryFailureRate: Double = 0.0,
    entryFailureCode: String = "ProvisionedThroughputExceededException",
    @volatile var failEntry: PutRecordsRequestEntry => Boolean = _ => false,
    @volatile var callFailure: Int => Option[Throwable] = _ => None,
    @volatile var listShardsFailure: Int => Option[Throwable] = _ => None,
    @volatile var staleListing: Int => Boolean = _ => false,
    @volatile var beforePutRecords: Int => Unit = _ => ()) extends KinesisAsyncClient {

  private val random = new Random(seed)
  private val callCount = new AtomicInteger
  private val inFlight = new AtomicInteger
  private val maxInFlightSeen = new AtomicInteger
  private val sequence = new AtomicLong
  val calls = new ConcurrentLinkedQueue[RecordedCall]()

  /** Sends and injected failures per data payload (as a UTF-8 string). */
  val sent = new ConcurrentHashMap[String, AtomicInteger]()
  val failed = new ConcurrentHashMap[String, AtomicInteger]()

  def recordedCalls: Seq[RecordedCall] = calls.asScala.toSeq
  def maxConcurrentCalls: Int = maxInFlightSeen.get()
  def injectedFailures: Int = recordedCalls.map(_.injectedFailures).sum

  override def serviceName(): String = "kinesis"
  override def close(): Unit = ()

  private val listShardsCount = new AtomicInteger
  private val describeCount = new AtomicInteger

  /** How long each PutRecords answer is held back after the server gave it: a slower round trip. */
  @volatile var responseDelayMillis: Long = 0L

  /** The stream's maximum record size that DescribeStreamSummary reports; unset, `delegate` answers (or none). */
  @volatile var maxRecordSizeKiB: Option[Int] = None

  /** DescribeStreamSummary calls made. */
  def describeStreamSummaryCalls: Int = describeCount.get()

  override def describeStreamSummary(
      request: DescribeStreamSummaryRequest): CompletableFuture[DescribeStreamSummaryResponse] = {
    describeCount.incrementAndGet()
    (maxRecordSizeKiB, delegate) match {
      case (Some(kib), _) =>
        CompletableFuture.completedFuture(DescribeStreamSummaryResponse.builder().streamDescriptionSummary(
            StreamDescriptionSummary.builder().streamName(request.streamName()).maxRecordSizeInKiB(kib).build()).build())
      case (None, Some(client)) => client.describeStreamSummary(request)
      case (None, None) => CompletableFuture.failedFuture(new UnsupportedOperationException("DescribeStreamSummary"))
    }
  }

  /** ListShards calls made, failed ones included. */
  def listShardsCalls: Int = listShardsCount.get()

  private val firstListing = new java.util.concurrent.atomic.AtomicReference[ListShardsResponse]()

  override def listShards(request: ListShardsRequest): CompletableFuture[ListShardsResponse] = {
    val n = listShardsCount.getAndIncrement()
    listShardsFailure(n).map(CompletableFuture.failedFuture[ListShardsResponse]).getOrElse {
      Option(firstListing.get()).filter(_ => staleListing(n)).map(CompletableFuture.completedFuture(_)).getOrElse(
        listed(request).thenApply { (r: ListShardsResponse) => firstListing.compareAndSet(null, r); r })
    }
  }

  private def listed(request: ListShardsRequest): CompletableFuture[ListShardsResponse] =
    delegate.map(_.listShards(request)).getOrElse(CompletableFuture.completedFuture(ListShardsResponse.builder()
          .shards(Shard.builder().shardId("shardId-000000000000")
              .hashKeyRange(
                HashKeyRange.builder().startingHashKey("0").endingHashKey((BigInt(2).pow(128) - 1).toString).build())
              .sequenceNumberRange(SequenceNumberRange.builder().startingSequenceNumber("0").build()).build()).build()))

  override def putRecords(request: PutRecordsRequest): CompletableFuture[PutRecordsResponse] = {
    val n = callCount.getAndIncrement()
    beforePutRecords(n)
    val entries = request.records().asScala.toIndexedSeq
    val sizes = entries.map(e =>
      e.partitionKey().getBytes(StandardCharsets.UTF_8).length.toLong + e.data().asByteArrayUnsafe().length)
    val bytes = sizes.sum
    val largest = if (sizes.isEmpty) 0L else sizes.max
    entries.foreach(e => count(sent, e))
    callFailure(n) match {
      case Some(error) =>
        calls.add(RecordedCall(entries.size, bytes, entries.size, largest))
        CompletableFuture.failedFuture(error)
      case None =>
        val failing = random.synchronized(entries.map(e => failEntry(e) || random.nextDouble() < entryFailureRate))
        entries.zip(failing).foreach { case (e, f) => if (f) count(failed, e) }
        calls.add(RecordedCall(entries.size, bytes, failing.count(identity), largest))
        val forwarded = entries.zip(failing).collect { case (e, false) => e }
        val concurrent = inFlight.incrementAndGet()
        maxInFlightSeen.accumulateAndGet(concurrent, math.max)
        val upstream =
          (if (forwarded.isEmpty) CompletableFuture.completedFuture(Seq.empty[PutRecordsResultEntry])
           else forward(request, forwarded)).thenCompose((r: Seq[PutRecordsResultEntry]) => delayed(r))
        upstream.whenComplete((_, _) => inFlight.decrementAndGet()).thenApply { results =>
          val it = results.iterator
          val merged = failing.map { f =>
            if (f)
              PutRecordsResultEntry.builder().errorCode(entryFailureCode).errorMessage("injected by the test").build()
            else it.next()
          }
          PutRecordsResponse.builder().records(merged.asJava).failedRecordCount(merged.count(_.errorCode() != null))
            .build()
        }
    }
  }

  private def delayed[T](value: T): CompletableFuture[T] = {
    val delay = responseDelayMillis
    if (delay <= 0) CompletableFuture.completedFuture(value)
    else CompletableFuture.supplyAsync(() => value,
      CompletableFuture.delayedExecutor(delay, java.util.concurrent.TimeUnit.MILLISECONDS))
  }

  private def forward(
      request: PutRecordsRequest,
      entries: Seq[PutRecordsRequestEntry]): CompletableFuture[Seq[PutRecordsResultEntry]] = delegate match {
    case Some(client) =>
      client.putRecords(request.toBuilder.records(entries.asJava).build()).thenApply(_.records().asScala.toSeq)
    case None =>
      CompletableFuture.completedFuture(entries.map(_ =>
          PutRecordsResultEntry.builder()
            .shardId("shardId-000000000000").sequenceNumber(sequence.incrementAndGet().toString).build()))
  }

  private def count(m: ConcurrentHashMap[String, AtomicInteger], e: PutRecordsRequestEntry): Unit =
    m.computeIfAbsent(new String(e.data().asByteArrayUnsafe(), StandardCharsets.UTF_8), _ => new AtomicInteger)
      .incrementAndGet()
}

/** Hands writers a given client (tests run executors in the same JVM, and never serialize this). */
final case class FixedClientFactory(fixed: KinesisAsyncClient) extends SinkClientFactory {
  override def client(connection: io.sparkkinesis.aws.AwsConnection, maxConcurrency: Int): KinesisAsyncClient = fixed
}
