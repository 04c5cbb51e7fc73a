package io.sparkkinesis.testing

import io.sparkkinesis.compat.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.services.kinesis.model._

/**
 * The in-process fake answers as the service does where the connector depends on it (paging, iterators, a closed
 * shard's end) and enforces the call-rate limits it is given. Its own checks, without Spark.
 */
class FakeKinesisSuite extends AnyFunSuite {

  private def iteratorAt(
      fake: FakeKinesis,
      stream: String,
      shard: String,
      kind: ShardIteratorType,
      seq: String = null) =
    fake.getShardIterator(GetShardIteratorRequest.builder().streamName(stream).shardId(shard).shardIteratorType(kind)
        .startingSequenceNumber(seq).build()).shardIterator()

  test("ListShards pages by NextToken, names the stream on the first page only, and takes MaxResults up to 10,000") {
    val fake = new FakeKinesis()
    fake.create("s", 2500)
    val first = fake.listShards(ListShardsRequest.builder().streamName("s").maxResults(1000).build())
    assert(first.shards().size == 1000 && first.nextToken() != null)
    intercept[InvalidArgumentException](
      fake.listShards(ListShardsRequest.builder().streamName("s").nextToken(first.nextToken()).build()))
    var token = first.nextToken()
    val ids = first.shards().asScala.map(_.shardId()).toBuffer
    while (token != null) {
      val page = fake.listShards(ListShardsRequest.builder().nextToken(token).maxResults(1000).build())
      ids ++= page.shards().asScala.map(_.shardId())
      token = page.nextToken()
    }
    assert(ids.distinct.size == 2500)
    assert(fake.listShards(ListShardsRequest.builder().streamName("s").maxResults(10000).build()).shards().size == 2500)
    intercept[InvalidArgumentException](
      fake.listShards(ListShardsRequest.builder().streamName("s").maxResults(10001).build()))
  }

  test("GetRecords reads in order, says how far behind it is, and ends a closed shard with a null iterator") {
    val fake = new FakeKinesis()
    val stream = fake.create("s", 1)
    fake.putRecords(PutRecordsRequest.builder().streamName("s").records((1 to 5).map(i =>
          PutRecordsRequestEntry.builder().partitionKey(s"k$i").data(SdkBytes.fromUtf8String(s"r$i")).build()).asJava)
        .build())
    val shard = stream.shards.head.id
    val page = fake.getRecords(GetRecordsRequest.builder()
        .shardIterator(iteratorAt(fake, "s", shard, ShardIteratorType.TRIM_HORIZON)).limit(2).build())
    assert(page.records().asScala.map(_.data().asUtf8String()) == Seq("r1", "r2"))
    assert(page.millisBehindLatest() >= 1L)
    val after =
      iteratorAt(fake, "s", shard, ShardIteratorType.AFTER_SEQUENCE_NUMBER, page.records().get(1).sequenceNumber())
    val rest = fake.getRecords(GetRecordsRequest.builder().shardIterator(after).build())
    assert(rest.records().asScala.map(_.data().asUtf8String()) == Seq("r3", "r4", "r5"))
    assert(rest.millisBehindLatest() == 0L && rest.nextShardIterator() != null)
    fake.splitShard(SplitShardRequest.builder().streamName("s").shardToSplit(shard)
        .newStartingHashKey(BigInt(2).pow(127).toString).build())
    val end = fake.getRecords(GetRecordsRequest.builder().shardIterator(rest.nextShardIterator()).build())
    assert(end.records().isEmpty && end.nextShardIterator() == null)
    assert(end.childShards().asScala.map(_.parentShards().asScala.toSeq).toSet == Set(Seq(shard)))
    val listed = fake.listShards(ListShardsRequest.builder().streamName("s").build()).shards().asScala
    assert(listed.size == 3 && listed.head.sequenceNumberRange().endingSequenceNumber() != null)
    assert(listed.tail.forall(_.parentShardId() == shard))
  }

  test("SubscribeToShard sends a closed shard's records in order, then its children, and ends; at most once a second") {
    // The rate is counted per clock second: the clock stays in the middle of one, so that the second call falls in
    // the first one's second however long the first took (two calls across a second's end may both pass).
    val fake = new FakeKinesis(Some(ServiceLimits()), () => 1700000000500L)
    val stream = fake.create("s", 1)
    val shard = stream.shards.head
    (1 to 3).foreach(i => shard.append(s"k$i", s"r$i".getBytes("UTF-8"), 1000L * i))
    fake.splitShard(SplitShardRequest.builder().streamName("s").shardToSplit(shard.id)
        .newStartingHashKey(BigInt(2).pow(127).toString).build())
    val consumer = fake.registerStreamConsumer(RegisterStreamConsumerRequest.builder().streamARN(stream.arn)
        .consumerName("c").build()).consumer().consumerARN()
    val events = new java.util.concurrent.ConcurrentLinkedQueue[SubscribeToShardEvent]()
    val request = SubscribeToShardRequest.builder().consumerARN(consumer).shardId(shard.id)
      .startingPosition(StartingPosition.builder().`type`(ShardIteratorType.TRIM_HORIZON).build()).build()
    val handler = SubscribeToShardResponseHandler.builder().subscriber(new java.util.function.Consumer[
        SubscribeToShardEventStream] {
        override def accept(e: SubscribeToShardEventStream): Unit = events.add(e.asInstanceOf[SubscribeToShardEvent])
      }).build()
    fake.fanOut.subscribeToShard(request, handler).get(10, java.util.concurrent.TimeUnit.SECONDS)
    val received = events.asScala.toSeq
    assert(received.flatMap(_.records().asScala.map(_.data().asUtf8String())) == Seq("r1", "r2", "r3"))
    assert(received.last.continuationSequenceNumber() == null && received.last.childShards().size == 2)
    val again = fake.fanOut.subscribeToShard(request,
      SubscribeToShardResponseHandler.builder()
        .subscriber(new java.util.function.Consumer[SubscribeToShardEventStream] {
          override def accept(e: SubscribeToShardEventStream): Unit = ()
        }).build())
    val e = intercept[java.util.concurrent.ExecutionException](again.get(10, java.util.concurrent.TimeUnit.SECONDS))
    assert(e.getCause.isInstanceOf[LimitExceededException])
  }

  test("with limits, calls over a rate are answered as the service answers them, and counted") {
    var now = 1000000L
    val limits = ServiceLimits(listShardsPerStream = 3)
    val fake = new FakeKinesis(Some(limits), () => now)
    fake.create("s", 20)
    val request = ListShardsRequest.builder().streamName("s").maxResults(5).build()
    (1 to 3).foreach(_ => fake.listShards(request))
    intercept[LimitExceededException](fake.listShards(request))
    now += 1000
    val token = fake.listShards(request).nextToken()
    now += limits.nextTokenMillis + 1
    intercept[ExpiredNextTokenException](fake.listShards(ListShardsRequest.builder().nextToken(token).build()))
    val shard = fake.stream("s").shards.head.id
    (1 to 5).foreach(_ => iteratorAt(fake, "s", shard, ShardIteratorType.LATEST))
    intercept[ProvisionedThroughputExceededException](iteratorAt(fake, "s", shard, ShardIteratorType.LATEST))
    val summary = DescribeStreamSummaryRequest.builder().streamName("s").build()
    (1 to 20).foreach(_ => fake.describeStreamSummary(summary))
    intercept[LimitExceededException](fake.describeStreamSummary(summary))
    val arn = fake.stream("s").arn
    (1 to 5).foreach(i =>
      fake.registerStreamConsumer(RegisterStreamConsumerRequest.builder().streamARN(arn).consumerName(s"c$i").build()))
    intercept[LimitExceededException](
      fake.registerStreamConsumer(RegisterStreamConsumerRequest.builder().streamARN(arn).consumerName("c6").build()))
    assert(
      fake.describeStreamConsumer(DescribeStreamConsumerRequest.builder().streamARN(arn).consumerName("c1").build())
        .consumerDescription().consumerStatus() == ConsumerStatus.ACTIVE)
    assert(limits.throttled == Map("ListShards" -> 1L, "GetShardIterator" -> 1L, "DescribeStreamSummary" -> 1L,
      "RegisterStreamConsumer" -> 1L))
  }
}
