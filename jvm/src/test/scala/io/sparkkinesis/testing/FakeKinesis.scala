package io.sparkkinesis.testing

import java.nio.charset.StandardCharsets
import java.security.MessageDigest
import java.time.Instant
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.{AtomicInteger, AtomicLong}

import io.sparkkinesis.compat.CollectionConverters._

import software.amazon.awssdk.awscore.exception.{AwsErrorDetails, AwsServiceException}
import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.services.kinesis.KinesisClient
import software.amazon.awssdk.services.kinesis.model._

import io.sparkkinesis.aws.KinesisClients

/**
 * An in-process Kinesis for tests and benchmarks at thousands of shards, where a local server (kinesalite,
 * kinesis-mock) is slow to create the streams and costs more CPU than the connector it serves. Streams live in
 * memory; the connector reaches them through its own client cache, which hands out this client for the fake's
 * endpoint URL ([[FakeKinesis.serve]], `KinesisClients.substitute`), so the code under test is unchanged and no
 * HTTP, JSON or signing is spent on the fake's side.
 *
 * It answers what the polling source calls: ListShards (paged by NextToken, MaxResults up to 10,000, only the first
 * page naming the stream; the token expires after `limits.nextTokenMillis`), DescribeStreamSummary,
 * GetShardIterator (every iterator type), GetRecords (MillisBehindLatest, ChildShards and a null NextShardIterator at
 * a closed shard's end, iterators expiring after 5 minutes); and PutRecord(s), CreateStream, SplitShard, MergeShards
 * and UpdateShardCount (twice or half) to set streams up; Register-, Describe- and DeregisterStreamConsumer (a consumer
 * is ACTIVE at once), and SubscribeToShard through its fan-out client ([[FakeSubscriptions]], substituted too).
 * Streams are ACTIVE at once. With `limits` it enforces the
 * service's call rates ([[ServiceLimits]]). Every call is counted by operation.
 */
final class FakeKinesis(val limits: Option[ServiceLimits] = None, clock: () => Long = () => System.currentTimeMillis())
  extends KinesisClient {
  import FakeKinesis._

  private val streams = new ConcurrentHashMap[String, FakeStream]()
  private val callCounts = new ConcurrentHashMap[String, AtomicLong]()

  override def serviceName(): String = "kinesis"
  override def close(): Unit = ()

  /** Calls made, by operation (throttled ones included). */
  def calls: Map[String, Long] = callCounts.asScala.map { case (op, n) => op -> n.get }.toMap

  private def count(operation: String): Unit =
    callCounts.computeIfAbsent(operation, _ => new AtomicLong).incrementAndGet()

  private def limit(operation: String, key: String, perSecond: ServiceLimits => Int): Unit =
    limits.foreach(l => l.admit(operation, key, perSecond(l), clock()))

  // ---- setting streams up (also through the API below) ----

  /** Creates `name` with `shards` shards of equal hash key ranges, ACTIVE at once. */
  def create(name: String, shards: Int): FakeStream = {
    val stream = new FakeStream(name, shards, clock())
    if (streams.putIfAbsent(name, stream) != null) throw error("ResourceInUseException", s"Stream $name exists")
    stream
  }

  def stream(name: String): FakeStream =
    Option(streams.get(name)).getOrElse(throw notFound(s"Stream $name under account 000000000000 not found."))

  /** Forgets the stream and its records. */
  def delete(name: String): Unit = streams.remove(name)

  /** Appends `perShard` records of `bytes` bytes to every open shard (the data array is shared), keys `k<shard>`. */
  def fill(name: String, perShard: Int, bytes: Int): Long = {
    val payload = Array.fill[Byte](bytes)('x'.toByte)
    val now = clock()
    val open = stream(name).openShards
    open.foreach(s => (0 until perShard).foreach(_ => s.append(s"k${s.number}", payload, now)))
    open.size.toLong * perShard
  }

  // ---- the API ----

  override def createStream(request: CreateStreamRequest): CreateStreamResponse = {
    count("CreateStream")
    create(request.streamName(), request.shardCount())
    CreateStreamResponse.builder().build()
  }

  /** What DescribeStreamSummary says of every stream's status: ACTIVE, unless a test keeps streams CREATING. */
  @volatile var reportedStatus: StreamStatus = StreamStatus.ACTIVE

  override def describeStreamSummary(request: DescribeStreamSummaryRequest): DescribeStreamSummaryResponse = {
    count("DescribeStreamSummary")
    limit("DescribeStreamSummary", "account", _.describeSummaryPerAccount)
    val s = named(request.streamName(), request.streamARN())
    DescribeStreamSummaryResponse.builder().streamDescriptionSummary(StreamDescriptionSummary.builder()
        .streamName(s.name).streamARN(s.arn).streamStatus(reportedStatus)
        .streamModeDetails(StreamModeDetails.builder().streamMode(StreamMode.PROVISIONED).build())
        .retentionPeriodHours(24).streamCreationTimestamp(Instant.ofEpochMilli(s.createdMillis))
        .encryptionType(EncryptionType.NONE).openShardCount(s.openShards.size).consumerCount(0)
        .enhancedMonitoring(EnhancedMetrics.builder().build()).build()).build()
  }

  override def listShards(request: ListShardsRequest): ListShardsResponse = {
    count("ListShards")
    val max = Option(request.maxResults()).map(_.intValue).getOrElse(1000)
    if (max < 1 || max > 10000) throw invalid(s"MaxResults must be from 1 to 10000, not $max")
    val (s, from) = Option(request.nextToken()) match {
      case Some(token) =>
        if (request.streamName() != null || request.streamARN() != null)
          throw invalid("NextToken and StreamName or StreamARN cannot be given together")
        val Array(name, offset, issued) = token.split('|')
        if (limits.exists(l => clock() - issued.toLong > l.nextTokenMillis))
          throw ServiceLimits.expiredToken(s"NextToken of stream $name has expired")
        (stream(name), offset.toInt)
      case None =>
        val s = named(request.streamName(), request.streamARN())
        val after = Option(request.exclusiveStartShardId())
          .map(id => s.shards.indexWhere(_.id == id) + 1).getOrElse(0)
        (s, after)
    }
    limit("ListShards", s.name, _.listShardsPerStream)
    val shards = s.shards
    val page = shards.slice(from, from + max)
    val response = ListShardsResponse.builder().shards(page.map(describe).asJava)
    if (from + max < shards.size) response.nextToken(s"${s.name}|${from + max}|${clock()}")
    response.build()
  }

  override def getShardIterator(request: GetShardIteratorRequest): GetShardIteratorResponse = {
    count("GetShardIterator")
    val s = named(request.streamName(), request.streamARN())
    val shard = s.shard(request.shardId()).getOrElse(throw notFound(s"Shard ${request.shardId()} not found"))
    limit("GetShardIterator", s"${s.name}/${shard.id}", _.shardIteratorsPerShard)
    val index = startIndex(shard, request.shardIteratorTypeAsString(), request.startingSequenceNumber(),
      request.timestamp())
    GetShardIteratorResponse.builder().shardIterator(iterator(s.name, shard.id, index)).build()
  }

  /** Where a read of `shard` from a starting position (GetShardIterator's, or SubscribeToShard's) begins. */
  private[testing] def startIndex(shard: FakeShard, kind: String, sequenceNumber: String, timestamp: Instant): Long = {
    def bySequence(after: Long): Long = shard.indexOf(sequenceNumber).map(i => math.max(0L, i + after))
      .getOrElse(throw invalid(s"$sequenceNumber is not a sequence number of ${shard.id}"))
    kind match {
      case "TRIM_HORIZON" => 0L
      case "LATEST" => shard.size
      case "AT_TIMESTAMP" => shard.firstAtOrAfter(timestamp.toEpochMilli)
      case "AT_SEQUENCE_NUMBER" => bySequence(0)
      case "AFTER_SEQUENCE_NUMBER" => bySequence(1)
      case other => throw invalid(s"unknown iterator type $other")
    }
  }

  /** The consumer registered under `arn`, if any. */
  private[testing] def consumer(arn: String): Option[ConsumerDescription] = Option(consumers.get(arn))

  private[testing] def countCall(operation: String): Unit = count(operation)

  private[testing] def admit(operation: String, key: String, perSecond: ServiceLimits => Int): Unit =
    limit(operation, key, perSecond)

  /** The children of `shardId`, as GetRecords and SubscribeToShard name them at its end. */
  private[testing] def childShards(s: FakeStream, shardId: String): Seq[ChildShard] =
    s.shards.filter(c => c.parent.contains(shardId) || c.adjacentParent.contains(shardId)).map { c =>
      ChildShard.builder().shardId(c.id).parentShards((c.parent.toSeq ++ c.adjacentParent).asJava)
        .hashKeyRange(hashRange(c)).build()
    }

  /** The enhanced fan-out client of this fake: SubscribeToShard from its consumers ([[FakeSubscriptions]]). */
  lazy val fanOut: FakeSubscriptions = new FakeSubscriptions(this, clock)

  override def getRecords(request: GetRecordsRequest): GetRecordsResponse = {
    count("GetRecords")
    val Array(name, shardId, position, issued) = request.shardIterator().split('|')
    val now = clock()
    if (now - issued.toLong > IteratorMillis)
      throw serviceError("ExpiredIteratorException", s"Iterator expired at ${issued.toLong + IteratorMillis}")
    val s = stream(name)
    val shard = s.shard(shardId).getOrElse(throw notFound(s"Shard $shardId not found"))
    limit("GetRecords", s"$name/$shardId", _.getRecordsPerShard)
    val limitCount = Option(request.limit()).map(_.intValue).getOrElse(10000)
    val closed = shard.closed
    val (records, size) = shard.slice(position.toLong, limitCount)
    val next = position.toLong + records.size
    val behind = if (next >= size) 0L else math.max(1L, now - shard.arrival(next))
    val response = GetRecordsResponse.builder()
      .records(records.map { case (i, key, data, arrival) =>
        Record.builder().sequenceNumber(shard.sequenceNumber(i)).partitionKey(key)
          .data(SdkBytes.fromByteArrayUnsafe(data)).approximateArrivalTimestamp(Instant.ofEpochMilli(arrival)).build()
      }.asJava)
      .millisBehindLatest(behind)
    if (closed && next >= size) response.childShards(childShards(s, shardId).asJava)
    else response.nextShardIterator(iterator(name, shardId, next))
    response.build()
  }

  override def putRecord(request: PutRecordRequest): PutRecordResponse = {
    count("PutRecord")
    val s = named(request.streamName(), request.streamARN())
    val shard = s.route(hashOf(request.partitionKey(), Option(request.explicitHashKey())))
    val index = shard.append(request.partitionKey(), request.data().asByteArray(), clock())
    PutRecordResponse.builder().shardId(shard.id).sequenceNumber(shard.sequenceNumber(index)).build()
  }

  override def putRecords(request: PutRecordsRequest): PutRecordsResponse = {
    count("PutRecords")
    val s = named(request.streamName(), request.streamARN())
    val now = clock()
    val results = request.records().asScala.map { e =>
      val shard = s.route(hashOf(e.partitionKey(), Option(e.explicitHashKey())))
      val index = shard.append(e.partitionKey(), e.data().asByteArray(), now)
      PutRecordsResultEntry.builder().shardId(shard.id).sequenceNumber(shard.sequenceNumber(index)).build()
    }
    PutRecordsResponse.builder().records(results.asJava).failedRecordCount(0).build()
  }

  override def splitShard(request: SplitShardRequest): SplitShardResponse = {
    count("SplitShard")
    named(request.streamName(), request.streamARN()).split(request.shardToSplit(), BigInt(request.newStartingHashKey()))
    SplitShardResponse.builder().build()
  }

  override def mergeShards(request: MergeShardsRequest): MergeShardsResponse = {
    count("MergeShards")
    named(request.streamName(), request.streamARN()).merge(request.shardToMerge(), request.adjacentShardToMerge())
    MergeShardsResponse.builder().build()
  }

  override def updateShardCount(request: UpdateShardCountRequest): UpdateShardCountResponse = {
    count("UpdateShardCount")
    val s = named(request.streamName(), request.streamARN())
    s.scaleTo(request.targetShardCount())
    UpdateShardCountResponse.builder().streamName(s.name).targetShardCount(request.targetShardCount()).build()
  }

  private val consumers = new ConcurrentHashMap[String, ConsumerDescription]()

  override def registerStreamConsumer(request: RegisterStreamConsumerRequest): RegisterStreamConsumerResponse = {
    count("RegisterStreamConsumer")
    limit("RegisterStreamConsumer", "account", _.registerConsumerPerAccount)
    val s = named(null, request.streamARN())
    val arn = s"${s.arn}/consumer/${request.consumerName()}:${clock() / 1000}"
    if (consumers.values().asScala.exists(c => c.streamARN() == s.arn && c.consumerName() == request.consumerName()))
      throw error("ResourceInUseException", s"Consumer ${request.consumerName()} exists")
    val description = ConsumerDescription.builder().consumerName(request.consumerName()).consumerARN(arn)
      .consumerStatus(ConsumerStatus.ACTIVE).consumerCreationTimestamp(Instant.ofEpochMilli(clock()))
      .streamARN(s.arn).build()
    consumers.put(arn, description)
    RegisterStreamConsumerResponse.builder().consumer(Consumer.builder().consumerName(description.consumerName())
        .consumerARN(arn).consumerStatus(ConsumerStatus.ACTIVE)
        .consumerCreationTimestamp(description.consumerCreationTimestamp()).build()).build()
  }

  override def describeStreamConsumer(request: DescribeStreamConsumerRequest): DescribeStreamConsumerResponse = {
    count("DescribeStreamConsumer")
    val found = Option(request.consumerARN()).flatMap(a => Option(consumers.get(a))).orElse(
      consumers.values().asScala.find(c =>
        c.streamARN() == request.streamARN() && c.consumerName() == request.consumerName()))
    limit("DescribeStreamConsumer", Option(request.streamARN()).orElse(found.map(_.streamARN())).getOrElse("?"),
      _.describeConsumerPerStream)
    DescribeStreamConsumerResponse.builder().consumerDescription(found.getOrElse(
        throw notFound(s"Consumer ${Option(request.consumerARN()).getOrElse(request.consumerName())} not found"))).build()
  }

  override def deregisterStreamConsumer(request: DeregisterStreamConsumerRequest): DeregisterStreamConsumerResponse = {
    count("DeregisterStreamConsumer")
    val found = Option(request.consumerARN()).flatMap(a => Option(consumers.get(a))).orElse(
      consumers.values().asScala.find(c =>
        c.streamARN() == request.streamARN() && c.consumerName() == request.consumerName()))
    found.fold(throw notFound("Consumer not found"))(c => consumers.remove(c.consumerARN()))
    DeregisterStreamConsumerResponse.builder().build()
  }

  // ---- helpers ----

  private def named(name: String, arn: String): FakeStream =
    Option(name).orElse(Option(arn).map(_.substring(arn.lastIndexOf('/') + 1)))
      .map(stream).getOrElse(throw invalid("StreamName or StreamARN is required"))

  private def iterator(stream: String, shardId: String, index: Long): String = s"$stream|$shardId|$index|${clock()}"

  private def describe(s: FakeShard): Shard =
    Shard.builder().shardId(s.id).parentShardId(s.parent.orNull).adjacentParentShardId(s.adjacentParent.orNull)
      .hashKeyRange(hashRange(s))
      .sequenceNumberRange(SequenceNumberRange.builder().startingSequenceNumber(s.startingSequenceNumber)
          .endingSequenceNumber(s.endingSequenceNumber.orNull).build())
      .build()

  private def hashRange(s: FakeShard): HashKeyRange =
    HashKeyRange.builder().startingHashKey(s.hashStart.toString).endingHashKey(s.hashEnd.toString).build()
}

object FakeKinesis {

  /** How long a shard iterator stays valid (5 minutes, as the service's). */
  val IteratorMillis: Long = 5L * 60 * 1000

  private val served = new AtomicInteger

  /**
   * Makes `fake` the connector's synchronous client for a new endpoint URL of its own, and returns the connector's
   * connection options for it (`withdraw` with the URL when done). Polling reads, shard discovery and the stream
   * check at `load()` use that client, enhanced fan-out its [[FakeSubscriptions]]; nothing builds an HTTP client.
   */
  def serve(fake: FakeKinesis): Map[String, String] = {
    val endpoint = s"http://fake-kinesis-${ProcessHandle.current().pid()}-${served.incrementAndGet()}.invalid:4567"
    KinesisClients.substitute(endpoint, fake, Some(fake.fanOut))
    Map("endpointUrl" -> endpoint, "region" -> "us-east-1", "awsAccessKeyId" -> "fake-key",
      "awsSecretKey" -> "fake-secret")
  }

  def withdraw(options: Map[String, String]): Unit = options.get("endpointUrl").foreach(KinesisClients.withdraw)

  /** A partition key's hash key as the service computes it (MD5, as an unsigned 128-bit number). */
  def hashOf(partitionKey: String, explicit: Option[String] = None): BigInt = explicit.map(BigInt(_)).getOrElse(
    BigInt(1, MessageDigest.getInstance("MD5").digest(partitionKey.getBytes(StandardCharsets.UTF_8))))

  private[testing] def serviceError(code: String, message: String): AwsServiceException = {
    val details = AwsErrorDetails.builder().errorCode(code).errorMessage(message).serviceName("Kinesis").build()
    (code match {
      case "ResourceNotFoundException" => ResourceNotFoundException.builder()
      case "InvalidArgumentException" => InvalidArgumentException.builder()
      case "ResourceInUseException" => ResourceInUseException.builder()
      case "ExpiredIteratorException" => ExpiredIteratorException.builder()
      case _ => KinesisException.builder()
    }).message(message).statusCode(400).awsErrorDetails(details).build().asInstanceOf[AwsServiceException]
  }

  private[testing] def notFound(message: String) = serviceError("ResourceNotFoundException", message)
  private def invalid(message: String) = serviceError("InvalidArgumentException", message)
  private def error(code: String, message: String) = serviceError(code, message)
}
