package io.sparkkinesis.writer

import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.compat.CollectionConverters._
import io.sparkkinesis.errors.KinesisException
import io.sparkkinesis.writer.SinkTestStreams._

/**
 * Streams whose maximum record size was raised (UpdateMaxRecordSize, up to 10,240 KiB; issue 28.6): the writer takes
 * the record limit from DescribeStreamSummary unless `maxRecordSize` is set, sends PutRecords calls of up to 10 MiB
 * to such a stream, and keeps KPL aggregates within its limit. The client is the in-process fake with no server
 * behind it: the local servers refuse records over 1 MiB and never report a maximum record size.
 */
class LargeRecordSinkSuite extends AnyFunSuite {
  private val Mi = 1024L * 1024

  private def writerOptions(fake: FaultInjectingClient, extra: Map[String, String] = Map.empty): SinkOptions =
    SinkOptions.parse((Map("streamName" -> "large", "region" -> "us-east-1", "endpointUrl" -> "http://127.0.0.1:1",
        "awsAccessKeyId" -> "test", "awsSecretKey" -> "test") ++ extra).asJava, false)
      .copy(clientFactory = FixedClientFactory(fake))

  /** A row of `bytes` bytes, partition key included, whose data starts with `tag`. */
  private def sized(tag: String, key: String, bytes: Long): org.apache.spark.sql.catalyst.InternalRow =
    row(tag + "x" * (bytes - tag.length - key.length).toInt, key)

  test("a stream of 10 MiB records: records up to 10 MiB land, in calls of up to 10 MiB, the stream asked once") {
    val fake = new FaultInjectingClient(None)
    fake.maxRecordSizeKiB = Some(10240)
    val rows = (0 until 60).iterator.map { i =>
      val bytes = if (i % 20 == 3) 10 * Mi else if (i % 4 == 0) 3 * Mi else 2000L
      sized(s"r$i|", s"key-${i % 7}", bytes)
    }
    val metrics = writeTask(writerOptions(fake), textSchema, rows)
    assert(metrics(SinkMetrics.RecordsWritten) == 60)
    val calls = fake.recordedCalls
    assert(calls.forall(c => c.bytes <= 10 * Mi && c.entries <= 500), calls)
    assert(calls.exists(_.bytes > 5 * Mi), s"no call passed the 5 MiB of a default stream: $calls")
    assert(calls.map(_.largest).max == 10 * Mi)
    assert(fake.describeStreamSummaryCalls == 1)
    // One byte more than the stream takes is refused, naming its limit.
    val over = new FaultInjectingClient(None)
    over.maxRecordSizeKiB = Some(10240)
    val e = intercept[KinesisException] {
      writeTask(writerOptions(over), textSchema, Iterator(sized("a|", "k", 10 * Mi + 1)), partitionId = 2)
    }
    assert(e.condition == "KINESIS_RECORD_TOO_LARGE")
    assert(e.getMessage.contains(s"is ${10 * Mi + 1} bytes") && e.getMessage.contains(s"over the limit of ${10 * Mi}"))
    assert(over.recordedCalls.isEmpty)
  }

  test("records within 1 MiB never ask the stream; one that does not say takes 1 MiB; maxRecordSize is not asked") {
    val large = new FaultInjectingClient(None)
    large.maxRecordSizeKiB = Some(10240)
    writeTask(writerOptions(large), textSchema, (0 until 20).iterator.map(i => sized(s"s$i|", "k", 900 * 1024L)))
    assert(large.describeStreamSummaryCalls == 0, "no record needed more than the default limit")
    assert(large.recordedCalls.forall(_.bytes <= 5 * Mi), "calls keep to 5 MiB while the stream is not known")
    val silent = new FaultInjectingClient(None) // DescribeStreamSummary fails, as on an endpoint that lacks it
    val e = intercept[KinesisException] {
      writeTask(writerOptions(silent), textSchema, Iterator(sized("a|", "k", 2 * Mi)))
    }
    assert(e.getMessage.contains(s"over the limit of $Mi bytes"), e.getMessage)
    val set = new FaultInjectingClient(None)
    set.maxRecordSizeKiB = Some(1024)
    val metrics = writeTask(writerOptions(set, Map("maxRecordSize" -> "4m")), textSchema,
      Iterator(sized("a|", "k", 4 * Mi), sized("b|", "k", 4 * Mi), sized("c|", "k", 10)))
    assert(metrics(SinkMetrics.RecordsWritten) == 3)
    assert(set.describeStreamSummaryCalls == 0, "maxRecordSize is set: the stream is not asked")
    assert(set.recordedCalls.forall(_.bytes <= 10 * Mi) && set.recordedCalls.map(_.largest).max == 4 * Mi)
  }

  test("aggregation=kpl: aggregates grow to aggregationMaxSize on a 10 MiB stream, and never past a stream's limit") {
    val rows = (0 until 1500).map(i => sized(s"u$i|", s"key-$i", 10 * 1024L))
    val large = new FaultInjectingClient(None)
    large.maxRecordSizeKiB = Some(10240)
    val written = writeTask(writerOptions(large, Map("aggregation" -> "kpl", "aggregationMaxSize" -> "8m")),
      textSchema, rows.iterator)
    assert(written(SinkMetrics.RecordsWritten) == 1500)
    val largest = large.recordedCalls.map(_.largest).max
    assert(largest > 7 * Mi && largest <= 8 * Mi, s"largest aggregate $largest bytes")
    // The same option on a stream of 1 MiB records: its aggregates stay within 1 MiB.
    val small = new FaultInjectingClient(None)
    small.maxRecordSizeKiB = Some(1024)
    writeTask(writerOptions(small, Map("aggregation" -> "kpl", "aggregationMaxSize" -> "8m")), textSchema,
      rows.iterator)
    assert(small.recordedCalls.map(_.largest).max <= Mi)
    assert(small.recordedCalls.forall(_.bytes <= 5 * Mi))
  }
}
