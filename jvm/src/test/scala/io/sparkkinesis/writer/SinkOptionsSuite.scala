package io.sparkkinesis.writer

import java.time.Duration

import io.sparkkinesis.compat.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.errors.KinesisOptionException

class SinkOptionsSuite extends AnyFunSuite {
  private val base = Map("region" -> "us-east-1", "endpointUrl" -> "http://127.0.0.1:4566")

  private def parse(extra: Map[String, String], hasStreamColumn: Boolean = false): SinkOptions =
    SinkOptions.parse((base ++ extra).asJava, hasStreamColumn)

  private def error(extra: Map[String, String], hasStreamColumn: Boolean = false): String =
    intercept[KinesisOptionException](parse(extra, hasStreamColumn)).getMessage

  test("defaults") {
    val o = parse(Map("streamName" -> "orders"))
    assert(o.stream.map(_.name).contains("orders"))
    assert(o.limits == SinkLimits(500, None, None), "the sizes are the stream's")
    // Unless maxRetries is set, maxRetryDuration alone ends a record's retries.
    assert(o.retry.maxRetries == Int.MaxValue && o.retry.maxDuration.contains(Duration.ofMinutes(2)))
    assert(o.maxInFlightRequests == 4 && !o.perKeyOrdering && !o.dropOversizeRecords)
    assert(o.partitionKeyColumn.isEmpty && o.aggregationMaxBytes.isEmpty)
    assert(o.clientFactory == SinkClientFactory.Shared)
  }

  test("every sink option is read, case-insensitively") {
    val o = parse(Map("streamName" -> "orders", "ORDERING" -> "perKey", "maxRetryDuration" -> "30s",
        "maxRetries" -> "3", "oversizeRecordAction" -> "DROP", "aggregation" -> "kpl", "aggregationMaxSize" -> "100k",
        "partitionKeyColumn" -> "id", "maxInFlightRequests" -> "8"))
    assert(o.perKeyOrdering && o.dropOversizeRecords && o.maxInFlightRequests == 8)
    assert(o.retry.maxRetries == 3 && o.retry.maxDuration.contains(Duration.ofSeconds(30)))
    assert(o.aggregationMaxBytes.contains(100 * 1024L) && o.partitionKeyColumn.contains("id"))
  }

  test("streamName is optional only when the input has a stream column") {
    assert(parse(Map.empty, hasStreamColumn = true).stream.isEmpty)
    assert(error(Map.empty).contains("[KINESIS_MISSING_OPTION] Option 'streamName' is required"))
    assert(error(Map("streamName" -> "a,b")).contains("exactly one stream name or ARN for the sink"))
  }

  test("inconsistent sizes and unknown values are refused") {
    assert(error(Map("streamName" -> "s", "maxRecordSize" -> "6m", "maxRequestSize" -> "5m"))
        .contains("larger than 'maxRequestSize'"))
    assert(error(Map("streamName" -> "s", "aggregation" -> "kpl", "aggregationMaxSize" -> "2m",
          "maxRecordSize" -> "1m"))
        .contains("larger than 'maxRecordSize'"))
    assert(error(Map("streamName" -> "s", "aggregationMaxSize" -> "20k")).contains("applies only with 'aggregation'"))
    assert(error(Map("streamName" -> "s", "ordering" -> "strict")).contains("one of unordered, perkey"))
    assert(error(Map("streamName" -> "s", "oversizeRecordAction" -> "skip")).contains("one of fail, drop"))
  }

  test("unset, the record and request limits are the stream's: 1 MiB records in 5 MiB calls, up to 10 MiB in 10 MiB") {
    val Mi = 1024L * 1024
    val unset = parse(Map("streamName" -> "s")).limits
    assert(unset.forStream(Mi) == PutLimits(500, 5 * Mi, Mi))
    assert(unset.forStream(10 * Mi) == PutLimits(500, 10 * Mi, 10 * Mi))
    assert(unset.forStream(2 * Mi) == PutLimits(500, 10 * Mi, 2 * Mi))
    // Set, the options win, and the stream is not asked.
    val set = parse(Map("streamName" -> "s", "maxRecordSize" -> "3m", "maxRequestSize" -> "4m")).limits
    assert(set.forStream(fail("the stream was asked although maxRecordSize is set")) == PutLimits(500, 4 * Mi, 3 * Mi))
    // maxRequestSize alone caps the stream's record limit: a record must fit in a call.
    assert(parse(Map("streamName" -> "s", "maxRequestSize" -> "2m")).limits.forStream(10 * Mi) ==
      PutLimits(500, 2 * Mi, 2 * Mi))
    // A large maxRecordSize alone takes 10 MiB calls.
    assert(parse(Map("streamName" -> "s", "maxRecordSize" -> "8m")).limits.forStream(Mi) ==
      PutLimits(500, 10 * Mi, 8 * Mi))
  }
}
