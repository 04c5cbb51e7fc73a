package io.sparkkinesis.reader

import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.config.Dialect
import io.sparkkinesis.fetching.BufferedRecord
import io.sparkkinesis.offsets.RecordPosition

/** The columns of each format (docs/source.md, "Columns"; docs/migrating.md) and the rows that fill them. */
class KinesisSchemaSuite extends AnyFunSuite {

  private def columns(schema: StructType): Seq[(String, DataType)] = schema.fields.toSeq.map(f => f.name -> f.dataType)

  test("format kinesis: Databricks' six columns in Databricks' order, then subSequenceNumber") {
    assert(KinesisSchema.of(Dialect.Kinesis) == KinesisSchema.Databricks)
    assert(columns(KinesisSchema.Databricks.schema) == Seq("partitionKey" -> StringType, "data" -> BinaryType,
      "stream" -> StringType, "shardId" -> StringType, "sequenceNumber" -> StringType,
      "approximateArrivalTimestamp" -> TimestampType, "subSequenceNumber" -> LongType))
  }

  test("format aws-kinesis: the awslabs connector's five columns, exactly") {
    assert(KinesisSchema.of(Dialect.AwsKinesis) == KinesisSchema.Awslabs)
    assert(columns(KinesisSchema.Awslabs.schema) == Seq("data" -> BinaryType, "streamName" -> StringType,
      "partitionKey" -> StringType, "sequenceNumber" -> StringType, "approximateArrivalTimestamp" -> TimestampType))
  }

  test("each format's stream column; the kinesis sink takes the same one as a row's target, aws-kinesis's none") {
    assert(KinesisSchema.Databricks.schema.fieldNames.contains(Dialect.Kinesis.streamColumn))
    assert(Dialect.Kinesis.sinkStreamColumn.contains(Dialect.Kinesis.streamColumn))
    assert(KinesisSchema.Awslabs.schema.fieldNames.contains(Dialect.AwsKinesis.streamColumn))
    assert(Dialect.AwsKinesis.sinkStreamColumn.isEmpty)
  }

  test("a record becomes a row with each value under its column, in either format") {
    val record = BufferedRecord(RecordPosition("4960", 3L, lastInAggregate = false), "key-7",
      "payload".getBytes("UTF-8"), 1700000000123L)
    val expected = Map[String, Any]("data" -> "payload", "stream" -> "orders", "streamName" -> "orders",
      "shardId" -> "shardId-000000000002", "partitionKey" -> "key-7", "sequenceNumber" -> "4960",
      "subSequenceNumber" -> 3L, "approximateArrivalTimestamp" -> 1700000000123000L)
    for (columns <- Seq(KinesisSchema.Databricks, KinesisSchema.Awslabs)) {
      val row = new RecordConverter(columns, "orders", "shardId-000000000002").toRow(record)
      assert(row.numFields == columns.schema.length)
      columns.schema.fields.zipWithIndex.foreach { case (f, i) =>
        val value = f.dataType match {
          case BinaryType => new String(row.getBinary(i), "UTF-8")
          case StringType => row.getUTF8String(i).toString
          case LongType | TimestampType => row.getLong(i)
          case other => fail(s"unexpected type $other")
        }
        assert(value == expected(f.name), s"${f.name} of $columns")
      }
    }
  }

  test("a catalog's copy of a schema matches whatever its nullability; another format's schema does not") {
    val relaxed = StructType(KinesisSchema.Databricks.schema.fields.map(_.copy(nullable = true)))
    assert(KinesisSchema.Databricks.matches(relaxed))
    assert(!KinesisSchema.Databricks.matches(KinesisSchema.Awslabs.schema))
    assert(!KinesisSchema.Awslabs.matches(KinesisSchema.Databricks.schema))
    assert(!KinesisSchema.Databricks.matches(StructType(KinesisSchema.Databricks.schema.fields.reverse)))
  }
}
