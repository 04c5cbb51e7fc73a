package io.sparkkinesis.fetching

import scala.collection.mutable
import io.sparkkinesis.compat.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.services.kinesis.KinesisClient
import software.amazon.awssdk.services.kinesis.model._

import io.sparkkinesis.aws.StreamRef
import io.sparkkinesis.errors.KinesisException
import io.sparkkinesis.offsets.{RecordPosition, ShardKey, ShardPosition, StartPosition}

/**
 * One open shard whose records up to `trimmedThrough` are gone, as retention leaves it: GetShardIterator refuses
 * their sequence numbers with InvalidArgumentException, and TRIM_HORIZON starts at the first record left. An
 * iterator handed out before a trim whose position is now among the trimmed records gets empty pages, the
 * retention period as MillisBehindLatest and itself as the next iterator, without end (as the service answers it).
 * No local server trims records, so this fake stands in for the service here (the end-to-end tests use the fault
 * proxy in front of kinesalite).
 *
 * `gone`: the service no longer knows the shard (ResourceNotFoundException); `streamGone`: nor the stream.
 * `sparseEmptyPages`: that many empty pages, while behind, before records are answered (a sparse shard).
 * `maxGetRecords`: fails the test past that many GetRecords calls (a reader that would poll forever).
 */
final class TrimmedShard(sequences: Seq[Long], @volatile var trimmedThrough: Long) extends KinesisClient {
  val iteratorRequests = mutable.ArrayBuffer.empty[GetShardIteratorRequest]
  @volatile var gone = false
  @volatile var streamGone = false
  @volatile var sparseEmptyPages = 0
  @volatile var maxGetRecords = Int.MaxValue
  @volatile var getRecordsCalls = 0
  override def serviceName(): String = "kinesis"
  override def close(): Unit = ()

  private def left: Seq[Long] = sequences.filter(_ > trimmedThrough)

  private def notFound(what: String) =
    ResourceNotFoundException.builder().message(s"$what not found (fake)").build()

  override def listShards(r: ListShardsRequest): ListShardsResponse = synchronized {
    if (streamGone) throw notFound(s"Stream ${r.streamName()}")
    ListShardsResponse.builder().shards(Shard.builder().shardId("shardId-000000000000").build()).build()
  }

  override def getShardIterator(r: GetShardIteratorRequest): GetShardIteratorResponse = synchronized {
    if (gone || streamGone) throw notFound(s"Shard ${r.shardId()}")
    iteratorRequests += r
    val from: Long = r.shardIteratorType() match {
      case ShardIteratorType.TRIM_HORIZON => trimmedThrough + 1
      case t @ (ShardIteratorType.AT_SEQUENCE_NUMBER | ShardIteratorType.AFTER_SEQUENCE_NUMBER) =>
        val seq = r.startingSequenceNumber().toLong
        if (seq <= trimmedThrough || seq == 666)
          throw InvalidArgumentException.builder()
            .message(s"StartingSequenceNumber $seq used in GetShardIterator on shard ${r.shardId()} is invalid").build()
        if (t == ShardIteratorType.AT_SEQUENCE_NUMBER) seq else seq + 1
      case other => throw new UnsupportedOperationException(other.toString)
    }
    GetShardIteratorResponse.builder().shardIterator(from.toString).build()
  }

  override def getRecords(r: GetRecordsRequest): GetRecordsResponse = synchronized {
    getRecordsCalls += 1
    if (getRecordsCalls > maxGetRecords) throw new AssertionError(s"more than $maxGetRecords GetRecords calls")
    if (gone || streamGone) throw notFound("Shard shardId-000000000000")
    val from = r.shardIterator().toLong
    if (sequences.exists(s => s >= from && s <= trimmedThrough))
      return GetRecordsResponse.builder().records(Seq.empty[Record].asJava).nextShardIterator(r.shardIterator())
        .millisBehindLatest(86400000L).build()
    if (sparseEmptyPages > 0 && left.exists(_ >= from)) {
      sparseEmptyPages -= 1
      return GetRecordsResponse.builder().records(Seq.empty[Record].asJava).nextShardIterator(r.shardIterator())
        .millisBehindLatest(1000L).build()
    }
    val page = left.filter(_ >= from).take(Option(r.limit()).map(_.intValue).getOrElse(10000))
    val next = page.lastOption.map(_ + 1).getOrElse(from)
    val records = page.map(s =>
      Record.builder().sequenceNumber(s.toString).partitionKey("k")
        .data(SdkBytes.fromUtf8String(s"r$s")).approximateArrivalTimestamp(java.time.Instant.EPOCH).build())
    val behind = if (left.exists(_ >= next)) 1000L else 0L
    GetRecordsResponse.builder().records(records.asJava).nextShardIterator(next.toString)
      .millisBehindLatest(behind).build()
  }
}

class PollingShardFetcherTrimSuite extends AnyFunSuite {
  private val orders = StreamRef("orders", None, None)

  private def fetcher(fake: TrimmedShard, start: StartPosition, failOnDataLoss: Boolean, perCall: Int = 100) =
    new PollingShardFetcher(new KinesisShardCalls(() => fake, orders, "shardId-000000000000"), start,
      maxRecordsPerCall = perCall, minPeriodMillis = 0,
      failOnDataLoss = failOnDataLoss, sleep = _ => ())

  /** The sequence numbers of the records `calls` fetches return (stopping at the end of the shard). */
  private def read(f: PollingShardFetcher, calls: Int): Seq[Long] =
    (1 to calls).flatMap(_ => if (f.shardEnded) Nil else f.fetch().records.map(_.sequenceNumber().toLong))

  test("resuming after a trimmed sequence number fails with KINESIS_DATA_LOSS naming the shard and both positions") {
    val fake = new TrimmedShard(1L to 20L, trimmedThrough = 10)
    val e = intercept[KinesisException](fetcher(fake, StartPosition.AfterSequence("4"), failOnDataLoss = true).fetch())
    assert(e.condition == "KINESIS_DATA_LOSS")
    assert(e.getMessage.contains("shard shardId-000000000000 of stream 'orders'"), e.getMessage)
    assert(e.getMessage.contains("sequence number 4") && e.getMessage.contains("(11)"), e.getMessage)
    assert(e.getMessage.contains("failOnDataLoss=false"), e.getMessage)
  }

  test("with failOnDataLoss=false the read goes on from the oldest record left, and the loss is counted once") {
    val fake = new TrimmedShard(1L to 20L, trimmedThrough = 10)
    val f = fetcher(fake, StartPosition.AfterSequence("4"), failOnDataLoss = false)
    val page = f.fetch()
    assert(page.records.map(_.sequenceNumber().toLong) == (11L to 20L))
    assert(f.dataLoss == 1)
    // Later reads continue after what was read; nothing more is lost or repeated.
    assert(f.fetch().records.isEmpty)
    assert(f.dataLoss == 1)
  }

  test("a position inside the shard is not data loss, even when the whole shard was trimmed up to just before it") {
    val fake = new TrimmedShard(1L to 20L, trimmedThrough = 10)
    val f = fetcher(fake, StartPosition.AtSequence("11"), failOnDataLoss = true)
    assert(f.fetch().records.map(_.sequenceNumber().toLong) == (11L to 20L))
    assert(f.dataLoss == 0)
  }

  test(
    "an iterator refused for another reason (the sequence number is not older than the trim horizon) is not taken for data loss") {
    val fake = new TrimmedShard((1L to 20L) :+ 666L :+ 700L, trimmedThrough = 10)
    val f = fetcher(fake, StartPosition.AfterSequence("666"), failOnDataLoss = false)
    val e = intercept[KinesisException](f.fetch())
    assert(e.condition == "KINESIS_SERVICE_ERROR", e.getMessage)
    assert(e.getCause.isInstanceOf[InvalidArgumentException] && e.getMessage.contains("StartingSequenceNumber 666"))
    assert(f.dataLoss == 0)
  }

  test(
    "a shard trimmed empty: with failOnDataLoss=false reading starts at the trim horizon and finds the new records") {
    val fake = new TrimmedShard(1L to 20L, trimmedThrough = 20)
    val f = fetcher(fake, StartPosition.AfterSequence("7"), failOnDataLoss = false)
    assert(f.fetch().records.isEmpty)
    assert(f.dataLoss == 1)
    assert(fake.iteratorRequests.last.shardIteratorType() == ShardIteratorType.TRIM_HORIZON)
  }
}

final class PollingShardFetcherLossPathsSuite extends AnyFunSuite {
  private val orders = StreamRef("orders", None, None)
  private val shard = "shardId-000000000000"
  private val key = ShardKey("orders", shard)

  private def fetcher(fake: TrimmedShard, start: StartPosition, failOnDataLoss: Boolean, perCall: Int = 100) =
    new PollingShardFetcher(new KinesisShardCalls(() => fake, orders, shard), start, maxRecordsPerCall = perCall,
      minPeriodMillis = 0,
      failOnDataLoss = failOnDataLoss, sleep = _ => ())

  private def read(f: PollingShardFetcher, calls: Int): Seq[Long] =
    (1 to calls).flatMap(_ => if (f.shardEnded) Nil else f.fetch().records.map(_.sequenceNumber().toLong))

  private def settings(failOnDataLoss: Boolean) =
    FetchSettings(maxRecordsPerCall = 100, minPeriodMillis = 0, failOnDataLoss = failOnDataLoss)

  private def range(
      fake: TrimmedShard,
      from: ShardPosition,
      end: Long,
      first: Option[String],
      failOnDataLoss: Boolean) =
    new RangeReader(null, orders, key, from, Some(RecordPosition(end.toString, 0L, lastInAggregate = true)),
      settings(failOnDataLoss), first)(start => fetcher(fake, start, failOnDataLoss))

  test("a live iterator whose position retention trimmed fails the read with KINESIS_DATA_LOSS naming the position") {
    val fake = new TrimmedShard(1L to 20L, trimmedThrough = 0)
    val f = fetcher(fake, StartPosition.TrimHorizon, failOnDataLoss = true, perCall = 5)
    assert(f.fetch().records.map(_.sequenceNumber().toLong) == (1L to 5L))
    fake.trimmedThrough = 10 // the iterator after 5 is held while retention trims 1..10
    val e = intercept[KinesisException](read(f, 20))
    assert(e.condition == "KINESIS_DATA_LOSS", e.getMessage)
    assert(e.getMessage.contains(s"shard $shard of stream 'orders'"), e.getMessage)
    assert(e.getMessage.contains("after sequence number 5") && e.getMessage.contains("is 11"), e.getMessage)
    assert(fake.getRecordsCalls < 12, s"${fake.getRecordsCalls} GetRecords calls before the loss was found")
    // Whoever calls next (a read-ahead loop may have met the loss first and dropped it) meets it too.
    assert(intercept[KinesisException](f.fetch()).getMessage == e.getMessage)
  }

  test("with failOnDataLoss=false a trimmed live iterator is counted once and reading goes on from the oldest record") {
    val fake = new TrimmedShard(1L to 20L, trimmedThrough = 0)
    val f = fetcher(fake, StartPosition.TrimHorizon, failOnDataLoss = false, perCall = 5)
    assert(f.fetch().records.map(_.sequenceNumber().toLong) == (1L to 5L))
    fake.trimmedThrough = 10
    assert(read(f, 12) == (11L to 20L))
    assert(f.dataLoss == 1)
  }

  test("empty pages while behind at a position that was not trimmed (a sparse shard) are not data loss") {
    val fake = new TrimmedShard(1L to 20L, trimmedThrough = 0)
    fake.sparseEmptyPages = 12
    val f = fetcher(fake, StartPosition.AfterSequence("4"), failOnDataLoss = true, perCall = 100)
    assert(read(f, 14) == (5L to 20L))
    assert(f.dataLoss == 0)
  }

  test("a shard the service no longer knows, of a stream that exists, is KINESIS_DATA_LOSS, not STREAM_NOT_FOUND") {
    val fake = new TrimmedShard(1L to 20L, trimmedThrough = 0)
    fake.gone = true
    val e = intercept[KinesisException](fetcher(fake, StartPosition.AfterSequence("7"), failOnDataLoss = true).fetch())
    assert(e.condition == "KINESIS_DATA_LOSS", e.getMessage)
    assert(e.getMessage.contains(s"shard $shard of stream 'orders'"), e.getMessage)
    assert(e.getMessage.contains("no longer exists") && e.getMessage.contains("after sequence number 7"), e.getMessage)
  }

  test("a missing shard of a missing stream is still KINESIS_STREAM_NOT_FOUND") {
    val fake = new TrimmedShard(1L to 20L, trimmedThrough = 0)
    fake.streamGone = true
    val e = intercept[KinesisException](fetcher(fake, StartPosition.TrimHorizon, failOnDataLoss = false).fetch())
    assert(e.condition == "KINESIS_STREAM_NOT_FOUND", e.getMessage)
  }

  test("with failOnDataLoss=false a shard gone mid-read is counted and taken as ended") {
    val fake = new TrimmedShard(1L to 20L, trimmedThrough = 0)
    val f = fetcher(fake, StartPosition.TrimHorizon, failOnDataLoss = false, perCall = 5)
    assert(f.fetch().records.size == 5)
    fake.gone = true
    val page = f.fetch()
    assert(page.records.isEmpty && page.shardEnded && f.shardEnded)
    assert(f.dataLoss == 1)
  }

  test("a replayed range planned from trim horizon whose head was trimmed since is KINESIS_DATA_LOSS") {
    val fake = new TrimmedShard(1L to 20L, trimmedThrough = 5)
    val from = ShardPosition.NotStarted(StartPosition.TrimHorizon)
    val e = intercept[KinesisException](range(fake, from, 10, Some("1"), failOnDataLoss = true).iterator.toList)
    assert(e.condition == "KINESIS_DATA_LOSS", e.getMessage)
    assert(e.getMessage.contains("sequence number 1") && e.getMessage.contains("(6)"), e.getMessage)
  }

  test("with failOnDataLoss=false the replayed range reads what is left of it and counts the loss once") {
    val fake = new TrimmedShard(1L to 20L, trimmedThrough = 5)
    val reader = range(fake, ShardPosition.NotStarted(StartPosition.TrimHorizon), 10, Some("1"), failOnDataLoss = false)
    assert(reader.iterator.map(_.position.sequenceNumber.toLong).toList == (6L to 10L))
    assert(reader.dataLoss == 1)
  }

  test("a range whose records were all trimmed, on an idle shard, ends with KINESIS_DATA_LOSS instead of polling") {
    val fake = new TrimmedShard(1L to 10L, trimmedThrough = 10)
    fake.maxGetRecords = 50
    val from = ShardPosition.NotStarted(StartPosition.TrimHorizon) // an offset written before ranges were pinned
    val e = intercept[KinesisException](range(fake, from, 8, None, failOnDataLoss = true).iterator.toList)
    assert(e.condition == "KINESIS_DATA_LOSS", e.getMessage)
    assert(e.getMessage.contains("cannot reach its end"), e.getMessage)
    val quiet = range(fake, from, 8, None, failOnDataLoss = false)
    assert(quiet.iterator.isEmpty)
    assert(quiet.dataLoss == 1)
  }
}
