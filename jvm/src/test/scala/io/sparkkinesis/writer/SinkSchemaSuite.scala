package io.sparkkinesis.writer

import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.config.Dialect
import io.sparkkinesis.errors.KinesisOptionException

class SinkSchemaSuite extends AnyFunSuite {

  private def schema(fields: (String, DataType)*): StructType =
    StructType(fields.map { case (n, t) => StructField(n, t) })

  private def error(s: StructType, keyColumn: Option[String] = None, dialect: Dialect = Dialect.Kinesis): String =
    intercept[KinesisOptionException](SinkSchema.of(s, keyColumn, dialect = dialect)).getMessage

  test("every optional column is found by name, in any order") {
    val s = SinkSchema.of(schema("stream" -> StringType, "explicitHashKey" -> StringType,
        "partitionKey" -> StringType, "data" -> BinaryType), None)
    assert(s == SinkSchema(3, dataIsString = false, 2, StringType, 1, 0, "stream"))
    assert(s.hasPartitionKey && s.streamIndex >= 0)
  }

  test("the stream column is the one a read gives under kinesis; aws-kinesis has none, as the awslabs sink") {
    val input = schema("data" -> BinaryType, "stream" -> StringType, "streamName" -> StringType)
    assert(SinkSchema.hasStreamColumn(input, Dialect.Kinesis) && !SinkSchema.hasStreamColumn(input, Dialect.AwsKinesis))
    assert(!SinkSchema.hasStreamColumn(schema("data" -> BinaryType, "streamName" -> StringType), Dialect.Kinesis))
    // aws-kinesis ignores other columns by default: a read's streamName passed on is left out, not a target.
    val awslabs = SinkSchema.of(input, None, ignoreUnused = true, Dialect.AwsKinesis)
    assert(awslabs.streamIndex == -1 && awslabs.dataIndex == 0)
    assert(!SinkSchema.expected(Dialect.AwsKinesis).contains("stream"))

    // A stream column the format does not route by gets a hint saying how this format picks a row's stream.
    val kinesis = error(schema("data" -> StringType, "streamName" -> StringType))
    assert(kinesis.startsWith("[KINESIS_INVALID_SINK_SCHEMA] Unexpected column streamName."), kinesis)
    assert(kinesis.contains("Under format 'kinesis' a row's target stream is column 'stream'") &&
      kinesis.contains("rename 'streamName' to 'stream'") && kinesis.contains(SinkSchema.expected(Dialect.Kinesis)))
    for (column <- Seq("streamName", "stream")) {
      val aws = error(schema("data" -> StringType, column -> StringType), dialect = Dialect.AwsKinesis)
      assert(
        aws.startsWith(s"[KINESIS_INVALID_SINK_SCHEMA] Unexpected column $column.") &&
          aws.contains("every row goes to the stream of option 'streamName', as in the awslabs sink") &&
          aws.contains(s"drop '$column'"), aws)
    }
  }

  test("data alone is enough (random partition keys)") {
    val s = SinkSchema.of(schema("data" -> StringType), None)
    assert(!s.hasPartitionKey && s.streamIndex == -1 && s.explicitHashKeyIndex == -1)
  }

  test("partitionKeyColumn names a string or integer column") {
    val s = SinkSchema.of(schema("data" -> StringType, "id" -> LongType), Some("id"))
    assert(s.partitionKeyIndex == 1 && s.partitionKeyType == LongType)
    assert(error(schema("data" -> StringType, "id" -> DoubleType), Some("id"))
        .contains("Column 'id' (the partition key) has type double"))
    assert(error(schema("data" -> StringType), Some("id")).contains(
        "Column 'id' named by option 'partitionKeyColumn' is missing"))
    assert(error(schema("data" -> StringType, "partitionKey" -> StringType, "id" -> LongType), Some("id"))
        .contains("use one of them"))
  }

  test("unknown columns, a missing data column and wrong types fail with the expected schema") {
    val expected = "data (binary or string, required), partitionKey (string, optional), " +
      "explicitHashKey (string, optional), stream (string, optional)"
    val extra = error(schema("data" -> StringType, "partitionKey" -> StringType, "extra" -> IntegerType))
    assert(extra.startsWith("[KINESIS_INVALID_SINK_SCHEMA] Unexpected column(s) extra.") && extra.contains(expected))
    assert(error(schema("partitionKey" -> StringType)).contains("Column 'data' is missing"))
    assert(error(schema("data" -> IntegerType)).contains("Column 'data' has type int"))
    assert(error(schema("data" -> StringType, "partitionKey" -> LongType)).contains(
        "Column 'partitionKey' (the partition key) has type bigint"))
    assert(error(schema("data" -> StringType, "stream" -> IntegerType)).contains("Column 'stream' has type int"))
    assert(error(schema("data" -> StringType, "explicitHashKey" -> LongType)).contains(
        "Column 'explicitHashKey' has type bigint"))
  }
}
