package io.sparkkinesis.sink

import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.errors.KinesisOptionException

class SinkSchemaSuite extends AnyFunSuite {

  private def schema(fields: (String, DataType)*): StructType =
    StructType(fields.map { case (n, t) => StructField(n, t) })

  private def error(s: StructType, keyColumn: Option[String] = None): String =
    intercept[KinesisOptionException](SinkSchema.of(s, keyColumn)).getMessage

  test("every optional column is found by name, in any order") {
    val s = SinkSchema.of(schema("streamName" -> StringType, "explicitHashKey" -> StringType,
        "partitionKey" -> StringType, "data" -> BinaryType), None)
    assert(s == SinkSchema(3, dataIsString = false, 2, StringType, 1, 0))
    assert(s.hasPartitionKey && s.hasStreamName)
  }

  test("data alone is enough (random partition keys)") {
    val s = SinkSchema.of(schema("data" -> StringType), None)
    assert(!s.hasPartitionKey && !s.hasStreamName && s.explicitHashKeyIndex == -1)
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
      "explicitHashKey (string, optional), streamName (string, optional)"
    val extra = error(schema("data" -> StringType, "partitionKey" -> StringType, "extra" -> IntegerType))
    assert(extra.startsWith("[KINESIS_INVALID_SINK_SCHEMA] Unexpected column(s) extra.") && extra.contains(expected))
    assert(error(schema("partitionKey" -> StringType)).contains("Column 'data' is missing"))
    assert(error(schema("data" -> IntegerType)).contains("Column 'data' has type int"))
    assert(error(schema("data" -> StringType, "partitionKey" -> LongType)).contains(
        "Column 'partitionKey' (the partition key) has type bigint"))
    assert(error(schema("data" -> StringType, "streamName" -> IntegerType)).contains(
        "Column 'streamName' has type int"))
    assert(error(schema("data" -> StringType, "explicitHashKey" -> LongType)).contains(
        "Column 'explicitHashKey' has type bigint"))
  }
}
