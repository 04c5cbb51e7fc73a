package io.sparkkinesis.reader

import org.apache.spark.sql.types._

/** The columns every Kinesis read produces, batch or streaming. */
private[sparkkinesis] object KinesisSchema {
  val Data = "data"
  val StreamName = "streamName"
  val ShardId = "shardId"
  val PartitionKey = "partitionKey"
  val SequenceNumber = "sequenceNumber"
  val SubSequenceNumber = "subSequenceNumber"
  val ApproximateArrivalTimestamp = "approximateArrivalTimestamp"

  val schema: StructType = StructType(Seq(
      StructField(Data, BinaryType, nullable = false),
      StructField(StreamName, StringType, nullable = false),
      StructField(ShardId, StringType, nullable = false),
      StructField(PartitionKey, StringType, nullable = false),
      StructField(SequenceNumber, StringType, nullable = false),
      StructField(SubSequenceNumber, LongType, nullable = false),
      StructField(ApproximateArrivalTimestamp, TimestampType, nullable = false)))

  /**
   * Whether `other` is this schema as a catalog may give it back: the same columns and types (a catalog may keep
   * nullability otherwise). A read given any other schema fails: its columns are Kinesis's, not the user's.
   */
  def matches(other: StructType): Boolean =
    other.fields.map(f => (f.name, f.dataType)).toSeq == schema.fields.map(f => (f.name, f.dataType)).toSeq
}
