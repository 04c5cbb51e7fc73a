package io.sparkkinesis.reader

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

import io.sparkkinesis.config.Dialect

/**
 * The columns a Kinesis read produces, batch or streaming, and how a record becomes a row of them. They follow the
 * format the read was opened with ([[Dialect]]), so that another connector's program finds the columns it selects:
 * under `kinesis`, Databricks' six columns in Databricks' order, then this connector's `subSequenceNumber`; under
 * `aws-kinesis`, the awslabs connector's five, exactly (names, order and types).
 */
private[sparkkinesis] sealed abstract class KinesisSchema(fields: StructField*) extends Serializable {
  val schema: StructType = StructType(fields)

  /** One record as a row of [[schema]]; `arrivalMicros` is the arrival time in microseconds since the epoch. */
  def row(
      data: Array[Byte],
      stream: UTF8String,
      shardId: UTF8String,
      partitionKey: UTF8String,
      sequenceNumber: UTF8String,
      subSequence: Long,
      arrivalMicros: Long): InternalRow

  /**
   * Whether `other` is this schema as a catalog may give it back: the same columns and types (a catalog may keep
   * nullability otherwise). A read given any other schema fails: its columns are Kinesis's, not the user's.
   */
  def matches(other: StructType): Boolean =
    other.fields.map(f => (f.name, f.dataType)).toSeq == schema.fields.map(f => (f.name, f.dataType)).toSeq
}

private[sparkkinesis] object KinesisSchema {
  val Data = "data"
  val ShardId = "shardId"
  val PartitionKey = "partitionKey"
  val SequenceNumber = "sequenceNumber"
  val SubSequenceNumber = "subSequenceNumber"
  val ApproximateArrivalTimestamp = "approximateArrivalTimestamp"

  private def column(name: String, dataType: DataType) = StructField(name, dataType, nullable = false)

  /**
   * `format("kinesis")`: partitionKey, data, stream, shardId, sequenceNumber, approximateArrivalTimestamp (Databricks'
   * columns, in its order, so a Databricks program runs unchanged), then subSequenceNumber (the user record's index
   * inside a KPL aggregate, which Databricks does not give).
   */
  case object Databricks extends KinesisSchema(
      column(PartitionKey, StringType),
      column(Data, BinaryType),
      column(Dialect.Kinesis.streamColumn, StringType),
      column(ShardId, StringType),
      column(SequenceNumber, StringType),
      column(ApproximateArrivalTimestamp, TimestampType),
      column(SubSequenceNumber, LongType)) {
    override def row(
        data: Array[Byte],
        stream: UTF8String,
        shardId: UTF8String,
        partitionKey: UTF8String,
        sequenceNumber: UTF8String,
        subSequence: Long,
        arrivalMicros: Long): InternalRow =
      new GenericInternalRow(Array[Any](partitionKey, data, stream, shardId, sequenceNumber, arrivalMicros,
          subSequence))
  }

  /** `format("aws-kinesis")`: data, streamName, partitionKey, sequenceNumber, approximateArrivalTimestamp. */
  case object Awslabs extends KinesisSchema(
      column(Data, BinaryType),
      column(Dialect.AwsKinesis.streamColumn, StringType),
      column(PartitionKey, StringType),
      column(SequenceNumber, StringType),
      column(ApproximateArrivalTimestamp, TimestampType)) {
    override def row(
        data: Array[Byte],
        stream: UTF8String,
        shardId: UTF8String,
        partitionKey: UTF8String,
        sequenceNumber: UTF8String,
        subSequence: Long,
        arrivalMicros: Long): InternalRow =
      new GenericInternalRow(Array[Any](data, stream, partitionKey, sequenceNumber, arrivalMicros))
  }

  /** The columns of a read opened with `dialect`'s format. */
  def of(dialect: Dialect): KinesisSchema = dialect match {
    case Dialect.Kinesis => Databricks
    case Dialect.AwsKinesis => Awslabs
  }
}
