package io.sparkkinesis.sink

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
    assert(o.limits == PutLimits(500, 5L * 1024 * 1024, 1024L * 1024))
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

  test("streamName is optional only when the input has a streamName column") {
    assert(parse(Map.empty, hasStreamColumn = true).stream.isEmpty)
    assert(error(Map.empty).contains("[KINESIS_MISSING_OPTION] Option 'streamName' is required"))
    assert(error(Map("streamName" -> "a,b")).contains("exactly one stream name or ARN for the sink"))
  }

  test("inconsistent sizes and unknown values are refused") {
    assert(error(Map("streamName" -> "s", "maxRecordSize" -> "6m")).contains("larger than 'maxRequestSize'"))
    assert(error(Map("streamName" -> "s", "aggregation" -> "kpl", "aggregationMaxSize" -> "2m"))
        .contains("larger than 'maxRecordSize'"))
    assert(error(Map("streamName" -> "s", "aggregationMaxSize" -> "20k")).contains("applies only with 'aggregation'"))
    assert(error(Map("streamName" -> "s", "ordering" -> "strict")).contains("one of unordered, perkey"))
    assert(error(Map("streamName" -> "s", "oversizeRecordAction" -> "skip")).contains("one of fail, drop"))
  }
}
