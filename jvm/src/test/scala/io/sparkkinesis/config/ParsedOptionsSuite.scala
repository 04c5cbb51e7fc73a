package io.sparkkinesis.config

import java.time.Duration

import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.errors.KinesisOptionException

class ParsedOptionsSuite extends AnyFunSuite {

  private def fails(options: Map[String, String], scope: Scope = Scope.Source)(use: ParsedOptions => Any): String =
    intercept[KinesisOptionException](use(ParsedOptions(options, scope))).getMessage

  test("keys are case-insensitive") {
    val opts = ParsedOptions(Map("STREAMNAME" -> "orders", "maxrecordsperfetch" -> "77"), Scope.Source)
    assert(opts.get(KinesisOptions.StreamName).contains("orders"))
    assert(opts.getOrDefault(KinesisOptions.MaxRecordsPerFetch) == 77)
  }

  test("an unknown option is named as the user wrote it, with close suggestions") {
    val message = fails(Map("streamName" -> "s", "endpointURl2" -> "x"))(identity)
    assert(message.startsWith("[KINESIS_UNKNOWN_OPTION] Unknown option 'endpointURl2'"))
    assert(message.contains("Did you mean 'endpointUrl'?"))
  }

  test("an unknown option far from every name gets no suggestion") {
    val message = fails(Map("zzzzzzzzzzzz" -> "1"))(identity)
    assert(!message.contains("Did you mean"))
  }

  test("a sink option on the source is refused, and the other way round") {
    assert(fails(Map("maxRetries" -> "3"))(identity).contains("Option 'maxRetries' applies to the Kinesis sink only"))
    assert(fails(Map("shardsPerTask" -> "3"), Scope.Sink)(identity)
        .contains("Option 'shardsPerTask' applies to the Kinesis source only"))
  }

  test("options Spark itself passes are accepted") {
    ParsedOptions(Map("path" -> "x", "checkpointLocation" -> "/tmp/c"), Scope.Sink)
  }

  test("malformed values name the option and the valid values") {
    val bounded = fails(Map("maxRecordsPerFetch" -> "20000"))(_.get(KinesisOptions.MaxRecordsPerFetch))
    assert(bounded.contains(
        "Option 'maxRecordsPerFetch' has the value '20000', but it must be a whole number from 1 to 10000"))
    val choice = fails(Map("initialPosition" -> "start"))(_.get(KinesisOptions.InitialPosition))
    assert(choice.contains("one of latest, trim_horizon, earliest, at_timestamp"))
    val bool = fails(Map("cborEnabled" -> "yes"))(_.get(KinesisOptions.CborEnabled))
    assert(bool.contains("true or false"))
  }

  test("secret values are never echoed") {
    val opts = Map("awsSecretKey" -> "   ")
    val message = fails(opts)(_.get(KinesisOptions.AwsSecretKey))
    assert(message.contains("has the value (hidden)"))
  }

  test("durations, sizes and timestamps parse in their documented forms") {
    val o = ParsedOptions(Map("minFetchPeriod" -> "2s", "maxRequestSize" -> "4m",
        "initialTimestamp" -> "2026-01-31T12:00:00Z"), Scope.Both)
    assert(o.get(KinesisOptions.MinFetchPeriod).contains(Duration.ofSeconds(2)))
    assert(o.get(KinesisOptions.MaxRequestSize).contains(4L * 1024 * 1024))
    assert(o.get(KinesisOptions.InitialTimestamp).map(_.toEpochMilli).contains(1769860800000L))
    assert(ParsedOptions(Map("initialTimestamp" -> "1769860800000"), Scope.Source)
        .get(KinesisOptions.InitialTimestamp).map(_.toEpochMilli).contains(1769860800000L))
    assert(fails(Map("minFetchPeriod" -> "40ms"))(_.get(KinesisOptions.MinFetchPeriod)).contains("from 50ms"))
  }

  test("a missing required option says how to set it") {
    val message = fails(Map.empty)(_.required(KinesisOptions.StreamName, "orders"))
    assert(
      message == "[KINESIS_MISSING_OPTION] Option 'streamName' is required. Example: .option(\"streamName\", \"orders\")")
  }
}
