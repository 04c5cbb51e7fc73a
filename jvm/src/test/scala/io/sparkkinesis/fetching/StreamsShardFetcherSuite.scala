package io.sparkkinesis.fetching

import java.time.Instant

import scala.collection.mutable

import com.fasterxml.jackson.databind.ObjectMapper
import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.services.dynamodb.model._
import software.amazon.awssdk.services.dynamodb.streams.DynamoDbStreamsClient

import io.sparkkinesis.aws.StreamRef
import io.sparkkinesis.compat.CollectionConverters._
import io.sparkkinesis.errors.KinesisException
import io.sparkkinesis.offsets.StartPosition

/**
 * The polling fetcher on DynamoDB Streams ([[StreamsShardCalls]]) against a fake service, for what moto does not do:
 * records trimmed by the 24-hour retention (TrimmedDataAccessException, from GetShardIterator and from GetRecords)
 * with and without `failOnDataLoss`, a shard that closes, a shard deleted while its stream exists, a start at a time;
 * and the record codec: every DynamoDB type written as the typed JSON `from_dynamodb_json` reads, and the fields
 * round trip.
 */
class StreamsShardFetcherSuite extends AnyFunSuite {

  private val arn = "arn:aws:dynamodb:us-east-1:123456789012:table/orders/stream/2026-01-01T00:00:00.000"
  private val stream = StreamRef(arn, Some(arn), Some("us-east-1"))

  private def record(seq: Long, createdMillis: Long = 1000L * 1000): Record =
    Record.builder().eventID(s"e$seq").eventName(OperationType.INSERT).dynamodb(StreamRecord.builder()
        .sequenceNumber(seq.toString).approximateCreationDateTime(Instant.ofEpochMilli(createdMillis))
        .keys(Map("pk" -> AttributeValue.builder().s(s"k$seq").build()).asJava)
        .newImage(Map("pk" -> AttributeValue.builder().s(s"k$seq").build()).asJava).sizeBytes(10L)
        .streamViewType(StreamViewType.NEW_AND_OLD_IMAGES).build()).build()

  /**
   * One shard of records with sequence numbers 1..`count`; those up to `trimmedThrough` gone; closed or open.
   * `gone`: the service no longer knows the shard (ResourceNotFoundException); `streamGone`: nor the stream.
   */
  private final class FakeShard(records: Seq[Record], var trimmedThrough: Long, closed: Boolean)
    extends DynamoDbStreamsClient {
    val iteratorTypes = mutable.ArrayBuffer.empty[String]
    var gone = false
    var streamGone = false
    override def serviceName(): String = "dynamodb"
    override def close(): Unit = ()

    private def notFound(what: String) = ResourceNotFoundException.builder().message(s"$what not found (fake)").build()

    override def describeStream(r: DescribeStreamRequest): DescribeStreamResponse = {
      if (streamGone) throw notFound(s"Stream ${r.streamArn()}")
      DescribeStreamResponse.builder().streamDescription(StreamDescription.builder().streamArn(r.streamArn()).build())
        .build()
    }

    private def seq(r: Record) = r.dynamodb().sequenceNumber().toLong
    private def trimmed(s: Long) =
      TrimmedDataAccessException.builder().message(s"sequence number $s is beyond the trim horizon (fake)").build()

    override def getShardIterator(r: GetShardIteratorRequest): GetShardIteratorResponse = {
      if (gone || streamGone) throw notFound(s"Shard ${r.shardId()}")
      iteratorTypes += r.shardIteratorTypeAsString()
      val from = r.shardIteratorType() match {
        case ShardIteratorType.TRIM_HORIZON => trimmedThrough + 1
        case ShardIteratorType.AT_SEQUENCE_NUMBER =>
          val s = r.sequenceNumber().toLong
          if (s <= trimmedThrough) throw trimmed(s)
          s
        case ShardIteratorType.AFTER_SEQUENCE_NUMBER =>
          val s = r.sequenceNumber().toLong
          if (s <= trimmedThrough) throw trimmed(s)
          s + 1
        case other => throw new UnsupportedOperationException(other.toString)
      }
      GetShardIteratorResponse.builder().shardIterator(from.toString).build()
    }

    override def getRecords(r: GetRecordsRequest): GetRecordsResponse = {
      if (gone || streamGone) throw notFound("Shard shardId-1")
      val from = r.shardIterator().toLong
      if (from <= trimmedThrough) throw trimmed(from)
      val page = records.filter(seq(_) >= from).take(r.limit())
      val next = page.lastOption.map(seq(_) + 1).getOrElse(from)
      val done = closed && !records.exists(seq(_) >= next)
      GetRecordsResponse.builder().records(page.asJava).nextShardIterator(if (done) null else next.toString).build()
    }
  }

  private def fetcher(shard: FakeShard, start: StartPosition, failOnDataLoss: Boolean, limit: Int = 2) =
    new PollingShardFetcher(new StreamsShardCalls(() => shard, stream, "shardId-1"), start, limit, minPeriodMillis = 0L,
      failOnDataLoss = failOnDataLoss, sleep = _ => ())

  private def sequences(page: FetchedPage): Seq[Long] = page.records.map(_.sequenceNumber().toLong)

  test("a closed shard is read to its end in pages; a short page is the tip, a full one behind") {
    val f = fetcher(new FakeShard((1L to 5L).map(record(_)), trimmedThrough = 0L, closed = true),
      StartPosition.TrimHorizon, failOnDataLoss = true)
    val pages = Iterator.continually(f.fetch()).takeWhile(_ => true).take(3).toList
    assert(pages.map(sequences) == Seq(Seq(1L, 2L), Seq(3L, 4L), Seq(5L)))
    assert(pages.map(_.millisBehindLatest > 0) == Seq(true, true, false))
    assert(f.shardEnded && pages.last.shardEnded)
  }

  test("a position trimmed by retention fails with [KINESIS_DATA_LOSS] naming failOnDataLoss") {
    val shard = new FakeShard((1L to 6L).map(record(_)), trimmedThrough = 3L, closed = false)
    val e = intercept[KinesisException](fetcher(shard, StartPosition.AfterSequence("1"), failOnDataLoss = true).fetch())
    assert(e.condition == "KINESIS_DATA_LOSS", e.getMessage)
    assert(e.getMessage.contains("failOnDataLoss=false") && e.getMessage.contains("24-hour retention"), e.getMessage)
  }

  test("with failOnDataLoss=false a trimmed position is counted and the read goes on from the oldest record") {
    val shard = new FakeShard((1L to 6L).map(record(_)), trimmedThrough = 3L, closed = false)
    val f = fetcher(shard, StartPosition.AfterSequence("1"), failOnDataLoss = false, limit = 10)
    // The same call goes on from the trim horizon once the iterator is refused.
    val first = f.fetch()
    assert(sequences(first) == Seq(4L, 5L, 6L) && !first.shardEnded && f.dataLoss == 1)
    assert(f.fetch().records.isEmpty && f.dataLoss == 1)
    assert(shard.iteratorTypes == Seq("AFTER_SEQUENCE_NUMBER", "TRIM_HORIZON"))
  }

  test("an iterator held while retention trimmed its position: GetRecords' refusal is data loss, counted once") {
    val shard = new FakeShard((1L to 6L).map(record(_)), trimmedThrough = 0L, closed = false)
    val failing = fetcher(shard, StartPosition.TrimHorizon, failOnDataLoss = true)
    assert(sequences(failing.fetch()) == Seq(1L, 2L))
    shard.trimmedThrough = 4L
    val e = intercept[KinesisException](failing.fetch())
    assert(e.condition == "KINESIS_DATA_LOSS", e.getMessage)
    assert(e.getMessage.contains("after sequence number 2") && e.getMessage.contains("24-hour retention"), e.getMessage)
    assert(intercept[KinesisException](failing.fetch()).getMessage == e.getMessage)

    shard.trimmedThrough = 0L
    val going = fetcher(shard, StartPosition.TrimHorizon, failOnDataLoss = false)
    assert(sequences(going.fetch()) == Seq(1L, 2L))
    shard.trimmedThrough = 4L
    val lost = going.fetch()
    assert(lost.records.isEmpty && lost.millisBehindLatest > 0 && !lost.shardEnded && going.dataLoss == 1)
    assert(sequences(going.fetch()) == Seq(5L, 6L) && going.dataLoss == 1)
    assert(shard.iteratorTypes.takeRight(1) == Seq("TRIM_HORIZON"))
  }

  test("a shard the service no longer knows, of a stream DescribeStream still answers, is data loss") {
    val shard = new FakeShard((1L to 6L).map(record(_)), trimmedThrough = 0L, closed = false)
    shard.gone = true
    val e = intercept[KinesisException](fetcher(shard, StartPosition.AfterSequence("3"), failOnDataLoss = true).fetch())
    assert(e.condition == "KINESIS_DATA_LOSS", e.getMessage)
    assert(e.getMessage.contains(s"shard shardId-1 of DynamoDB stream '$arn'"), e.getMessage)
    assert(e.getMessage.contains("no longer exists") && e.getMessage.contains("after sequence number 3"), e.getMessage)
    val quiet = fetcher(shard, StartPosition.TrimHorizon, failOnDataLoss = false)
    val page = quiet.fetch()
    assert(page.records.isEmpty && page.shardEnded && quiet.shardEnded && quiet.dataLoss == 1)
    shard.streamGone = true
    val missing = intercept[KinesisException](fetcher(shard, StartPosition.TrimHorizon, failOnDataLoss = false).fetch())
    assert(missing.condition == "KINESIS_STREAM_NOT_FOUND", missing.getMessage)
  }

  test("a start at a time reads from the oldest record and skips what was created before that second") {
    val recs = Seq(record(1, 5000L), record(2, 9000L), record(3, 10000L), record(4, 10999L), record(5, 12000L))
    val shard = new FakeShard(recs, 0L, closed = false)
    val f = fetcher(shard, StartPosition.AtTimestamp(10500L), failOnDataLoss = true, limit = 10)
    assert(sequences(f.fetch()) == Seq(3L, 4L, 5L))
    assert(shard.iteratorTypes == Seq("TRIM_HORIZON"))
    // In pages: a full page of skipped records is behind, and the first record kept ends the skipping.
    val paged = fetcher(new FakeShard(recs :+ record(6, 7000L), 0L, closed = false), StartPosition.AtTimestamp(10500L),
      failOnDataLoss = true)
    val pages = Seq.fill(3)(paged.fetch())
    assert(pages.map(sequences) == Seq(Nil, Seq(3L, 4L), Seq(5L, 6L)))
    assert(pages.head.millisBehindLatest > 0)
  }

  test("a stream record carries its fields and its items as the typed JSON from_dynamodb_json reads") {
    def s(v: String) = AttributeValue.builder().s(v).build()
    val image = Map(
      "pk" -> s("quote \" backslash \\ newline \n tab \t é 中 \u0001"),
      "n" -> AttributeValue.builder().n("12.50").build(),
      "b" -> AttributeValue.builder().b(SdkBytes.fromByteArray(Array[Byte](0, 1, -1))).build(),
      "t" -> AttributeValue.builder().bool(true).build(),
      "z" -> AttributeValue.builder().nul(true).build(),
      "ss" -> AttributeValue.builder().ss("a", "b").build(),
      "ns" -> AttributeValue.builder().ns("1", "2.5").build(),
      "bs" -> AttributeValue.builder().bs(SdkBytes.fromByteArray(Array[Byte](7))).build(),
      "m" -> AttributeValue.builder().m(Map("inner" -> s("x")).asJava).build(),
      "l" -> AttributeValue.builder().l(s("y"), AttributeValue.builder().n("3").build()).build())
    val json = StreamRecordCodec.image(image.asJava).get
    val tree = new ObjectMapper().readTree(json)
    assert(tree.get("pk").get("S").asText() == "quote \" backslash \\ newline \n tab \t é 中 \u0001")
    assert(tree.get("n").get("N").asText() == "12.50")
    assert(java.util.Base64.getDecoder.decode(tree.get("b").get("B").asText()).toSeq == Seq[Byte](0, 1, -1))
    assert(tree.get("t").get("BOOL").asBoolean() && tree.get("z").get("NULL").asBoolean())
    assert(
      tree.get("ss").get("SS").toString == """["a","b"]""" && tree.get("ns").get("NS").toString == """["1","2.5"]""")
    assert(tree.get("bs").get("BS").get(0).asText() == "Bw==")
    assert(tree.get("m").get("M").get("inner").get("S").asText() == "x")
    assert(tree.get("l").get("L").toString == """[{"S":"y"},{"N":"3"}]""")

    val r = Record.builder().eventID("e1").eventName(OperationType.REMOVE)
      .userIdentity(Identity.builder().`type`("Service").principalId("dynamodb.amazonaws.com").build())
      .dynamodb(StreamRecord.builder().sequenceNumber("42").approximateCreationDateTime(Instant.ofEpochSecond(7))
          .keys(Map("pk" -> s("a")).asJava).oldImage(image.asJava).sizeBytes(99L)
          .streamViewType(StreamViewType.NEW_AND_OLD_IMAGES).build()).build()
    val k = StreamRecordCodec.toKinesis(r)
    assert(k.sequenceNumber() == "42" && k.partitionKey() == """{"pk":{"S":"a"}}""")
    assert(k.approximateArrivalTimestamp() == Instant.ofEpochSecond(7))
    assert(StreamRecordCodec.decode(k.data().asByteArray()) == StreamRecordCodec.Fields("e1", "REMOVE", 99L,
      "NEW_AND_OLD_IMAGES", Some("Service"), Some("dynamodb.amazonaws.com"), None, Some(json)))
    // Never taken for a KPL aggregate (whose data starts with the magic F3 89 9A C2).
    assert(BufferedRecord.fromKinesis(k, SubRecordFilter.KeepAll).map(_.data.toSeq) == Seq(
      k.data().asByteArray().toSeq))
  }
}
