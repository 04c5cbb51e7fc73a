package io.sparkkinesis.fetching

import scala.collection.mutable
import scala.jdk.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.services.kinesis.KinesisClient
import software.amazon.awssdk.services.kinesis.model._

import io.sparkkinesis.aws.StreamRef
import io.sparkkinesis.errors.KinesisException
import io.sparkkinesis.offsets.StartPosition

/**
 * One open shard whose records up to `trimmedThrough` are gone, as retention leaves it: GetShardIterator refuses
 * their sequence numbers with InvalidArgumentException, and TRIM_HORIZON starts at the first record left. No
 * local server trims records, so this fake stands in for the service here (the end-to-end test uses the fault
 * proxy in front of kinesalite).
 */
final class TrimmedShard(sequences: Seq[Long], @volatile var trimmedThrough: Long) extends KinesisClient {
  val iteratorRequests = mutable.ArrayBuffer.empty[GetShardIteratorRequest]
  override def serviceName(): String = "kinesis"
  override def close(): Unit = ()

  private def left: Seq[Long] = sequences.filter(_ > trimmedThrough)

  override def getShardIterator(r: GetShardIteratorRequest): GetShardIteratorResponse = synchronized {
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
    val from = r.shardIterator().toLong
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

  private def fetcher(fake: TrimmedShard, start: StartPosition, failOnDataLoss: Boolean) =
    new PollingShardFetcher(() => fake, orders, "shardId-000000000000", start, maxRecordsPerCall = 100,
      minPeriodMillis = 0,
      failOnDataLoss = failOnDataLoss, sleep = _ => ())

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
