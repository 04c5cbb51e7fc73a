package io.sparkkinesis.payload.dynamodb

import org.apache.spark.sql.Row
import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.testing.SharedSparkSession

/**
 * `from_dynamodb_json` in SQL and in the DataFrame API: each DynamoDB type into the Spark types that hold it, nulls,
 * nesting, and the refusals that keep numbers and types from being changed silently. The reference test against
 * boto3's own (de)serializer, on generated items, is tests/test_dynamodb_json.py.
 */
class FromDynamoDbJsonSuite extends AnyFunSuite with SharedSparkSession {

  private def read(json: String, schema: String): Row = {
    val escaped = json.replace("'", "\\'")
    spark.sql(s"SELECT from_dynamodb_json('$escaped', '$schema') AS v").head().getStruct(0)
  }

  /** The messages of an error and its causes (a task's failure reaches the driver wrapped). */
  private def messages(e: Throwable): String =
    Iterator.iterate(e)(_.getCause).takeWhile(_ != null).map(_.getMessage).mkString("\n")

  private val item =
    """{"id": {"S": "a1"}, "n": {"N": "-12"}, "big": {"N": "123456789012345678901234567890.125"},
      | "ok": {"BOOL": true}, "raw": {"B": "AAEC/w=="}, "gone": {"NULL": true},
      | "at": {"N": "1714564800.5"}, "when": {"S": "2024-05-01T12:00:00+02:00"}, "day": {"S": "2024-05-01"},
      | "tags": {"SS": ["x", "y"]}, "scores": {"NS": ["1", "2.5"]}, "blobs": {"BS": ["AQ=="]},
      | "lines": {"L": [{"M": {"sku": {"S": "p1"}, "qty": {"N": "2"}}}, {"NULL": true}]},
      | "attrs": {"M": {"color": {"S": "red"}, "size": {"N": "9"}}}, "unnamed": {"S": "ignored"}}""".stripMargin

  test("every DynamoDB type reads into the Spark types that hold it; missing and NULL attributes are null") {
    val v = read(item,
      "id STRING, n INT, big DECIMAL(38,3), ok BOOLEAN, raw BINARY, gone STRING, absent DOUBLE, at TIMESTAMP, " +
        "when TIMESTAMP, day DATE, tags ARRAY<STRING>, scores ARRAY<DOUBLE>, blobs ARRAY<BINARY>, " +
        "lines ARRAY<STRUCT<sku: STRING, qty: BIGINT>>, attrs MAP<STRING, STRING>")
    assert(v.getString(0) == "a1" && v.getInt(1) == -12)
    assert(v.getDecimal(2) == new java.math.BigDecimal("123456789012345678901234567890.125"))
    assert(v.getBoolean(3) && v.getAs[Array[Byte]](4).toSeq == Seq[Byte](0, 1, 2, -1))
    assert(v.isNullAt(5) && v.isNullAt(6))
    assert(v.getTimestamp(7).toInstant == java.time.Instant.parse("2024-05-01T12:00:00.500Z"))
    assert(v.getTimestamp(8).toInstant == java.time.Instant.parse("2024-05-01T10:00:00Z"))
    assert(v.getDate(9).toLocalDate == java.time.LocalDate.parse("2024-05-01"))
    assert(v.getSeq[String](10) == Seq("x", "y") && v.getSeq[Double](11) == Seq(1.0, 2.5))
    assert(v.getSeq[Array[Byte]](12).map(_.toSeq) == Seq(Seq[Byte](1)))
    assert(v.getSeq[Row](13) == Seq(Row("p1", 2L), null))
    assert(v.getMap[String, String](14) == Map("color" -> "red", "size" -> "9"), "N reads into a string as written")
  }

  test("the DataFrame API takes the schema as DDL or as a StructType, and a null item gives a null struct") {
    import spark.implicits._
    val df = Seq(Some("""{"id": {"S": "a"}, "total": {"N": "1.50"}}"""), None).toDF("item")
    val ddl = df.select(io.sparkkinesis.functions.from_dynamodb_json($"item", "id STRING, total DECIMAL(6,2)"))
    val schema = org.apache.spark.sql.types.StructType.fromDDL("id STRING, total DECIMAL(6,2)")
    val typed = df.select(io.sparkkinesis.functions.from_dynamodb_json($"item", schema))
    for (rows <- Seq(ddl.collect(), typed.collect())) {
      assert(rows(0).getStruct(0) == Row("a", new java.math.BigDecimal("1.50")))
      assert(rows(1).isNullAt(0))
    }
  }

  test("a value its field cannot hold without loss fails the query, naming the attribute and what to do") {
    def failure(json: String, schema: String): String = messages(intercept[Exception](read(json, schema)))
    val cases = Seq(
      ("""{"n": {"N": "2.5"}}""", "n INT", "attribute 'n'", "the number 2.5 does not fit int"),
      ("""{"n": {"N": "3000000000"}}""", "n INT", "attribute 'n'", "read it as a wider integer or a decimal"),
      ("""{"d": {"N": "1.005"}}""", "d DECIMAL(5,2)", "attribute 'd'", "3 digits after the point"),
      ("""{"m": {"M": {"x": {"N": "1.5"}}}}""", "m STRUCT<x: BIGINT>", "attribute 'm.x'", "does not fit bigint"),
      ("""{"s": {"S": "ten"}}""", "s INT", "attribute 's'", "a int field takes N"),
      ("""{"l": {"L": [{"S": "a"}, {"N": "x1"}]}}""", "l ARRAY<STRING>", "attribute 'l[1]'", "'x1' is not a number"),
      ("""{"t": {"X": "1"}}""", "t STRING", "attribute 't'", "'X' is not a DynamoDB type"),
      ("""[1, 2]""", "t STRING", "the item", "it is an array, not an item"),
      ("""{"t": """, "t STRING", "the item", "it is not JSON"))
    cases.foreach { case (json, schema, what, problem) =>
      val message = failure(json, schema)
      assert(
        message.contains("[KINESIS_DYNAMODB_JSON_UNREADABLE]") && message.contains(s"Cannot read $what of") &&
          message.contains(problem), s"$json as $schema: $message")
    }
  }

  test("a schema with a type no DynamoDB type reads into, or not a struct, is refused when the query is defined") {
    val interval = messages(intercept[Exception](read("""{"a": {"S": "x"}}""", "a INTERVAL DAY")))
    assert(
      interval.contains("[KINESIS_INVALID_SCHEMA] The schema of from_dynamodb_json cannot be used here: field " +
        "'a' is interval day, which no DynamoDB type reads into"), interval)
    val garbled = messages(intercept[Exception](read("""{"a": {"S": "x"}}""", "a STRING,,")))
    assert(garbled.contains("[KINESIS_INVALID_SCHEMA]") && garbled.contains("neither a DDL schema"), garbled)
  }
}
