package io.sparkkinesis.reader

import scala.annotation.switch

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

import io.sparkkinesis.compat.Variants
import io.sparkkinesis.config.Dialect
import io.sparkkinesis.fetching.StreamRecordCodec

/**
 * The columns a Kinesis read produces, batch or streaming, and how a record becomes a row of them. They follow the
 * format the read was opened with ([[Dialect]]), so that another connector's program finds the columns it selects:
 * under `kinesis`, Databricks' six columns in Databricks' order, then this connector's `subSequenceNumber`; under
 * `aws-kinesis`, the awslabs connector's five, exactly (names, order and types).
 */
private[sparkkinesis] sealed abstract class KinesisSchema(columns: KinesisSchema.Column*) extends Serializable {
  val schema: StructType = StructType(columns.map(_.field))

  /** Which of a record's values each column holds, in the columns' order. */
  private val values: Array[Int] = columns.map(_.value).toArray

  /** One record as a row of [[schema]]; `arrivalMicros` is the arrival time in microseconds since the epoch. */
  def row(
      data: Array[Byte],
      stream: UTF8String,
      shardId: UTF8String,
      partitionKey: UTF8String,
      sequenceNumber: UTF8String,
      subSequence: Long,
      arrivalMicros: Long): InternalRow = {
    val row = new Array[Any](values.length)
    var i = 0
    while (i < values.length) {
      row(i) = (values(i): @switch) match {
        case KinesisSchema.DataValue => data
        case KinesisSchema.StreamValue => stream
        case KinesisSchema.ShardIdValue => shardId
        case KinesisSchema.PartitionKeyValue => partitionKey
        case KinesisSchema.SequenceNumberValue => sequenceNumber
        case KinesisSchema.SubSequenceValue => subSequence
        case _ => arrivalMicros
      }
      i += 1
    }
    new GenericInternalRow(row)
  }

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

  // The values of a record a column may hold.
  private final val DataValue = 0
  private final val StreamValue = 1
  private final val ShardIdValue = 2
  private final val PartitionKeyValue = 3
  private final val SequenceNumberValue = 4
  private final val SubSequenceValue = 5
  private final val ArrivalValue = 6

  /** A column, and which of a record's values it holds. */
  final case class Column(field: StructField, value: Int)

  private def column(name: String, dataType: DataType, value: Int) =
    Column(StructField(name, dataType, nullable = false), value)

  /**
   * `format("kinesis")`: partitionKey, data, stream, shardId, sequenceNumber, approximateArrivalTimestamp (Databricks'
   * columns, in its order, so a Databricks program runs unchanged), then subSequenceNumber (the user record's index
   * inside a KPL aggregate, which Databricks does not give).
   */
  case object Databricks extends KinesisSchema(
      column(PartitionKey, StringType, PartitionKeyValue),
      column(Data, BinaryType, DataValue),
      column(Dialect.Kinesis.streamColumn, StringType, StreamValue),
      column(ShardId, StringType, ShardIdValue),
      column(SequenceNumber, StringType, SequenceNumberValue),
      column(ApproximateArrivalTimestamp, TimestampType, ArrivalValue),
      column(SubSequenceNumber, LongType, SubSequenceValue))

  /** `format("aws-kinesis")`: data, streamName, partitionKey, sequenceNumber, approximateArrivalTimestamp. */
  case object Awslabs extends KinesisSchema(
      column(Data, BinaryType, DataValue),
      column(Dialect.AwsKinesis.streamColumn, StringType, StreamValue),
      column(PartitionKey, StringType, PartitionKeyValue),
      column(SequenceNumber, StringType, SequenceNumberValue),
      column(ApproximateArrivalTimestamp, TimestampType, ArrivalValue))

  /**
   * `format("dynamodb-streams")`: a DynamoDB Streams record's fields (docs/dynamodb-streams.md), `keys`, `newImage`
   * and `oldImage` in DynamoDB's typed JSON (what `from_dynamodb_json` reads; an image the stream's view type leaves
   * out is null), or with `variant` (`imageColumnType=variant`, Spark 4.0 and later) as VARIANT values of the item's
   * attributes ([[io.sparkkinesis.compat.Variants]]), `userIdentity` set for deletes by TTL (type `Service`,
   * principal `dynamodb.amazonaws.com`). The engine carries the record as a Kinesis one
   * (`fetching.StreamRecordCodec`): the keys as its partition key, the rest in its data.
   */
  final case class DynamoDbStreams(variant: Boolean) extends KinesisSchema(
      column("eventID", StringType, -1),
      column("eventName", StringType, -1),
      column("approximateCreationDateTime", TimestampType, -1),
      column(SequenceNumber, StringType, -1),
      column("sizeBytes", LongType, -1),
      column("streamViewType", StringType, -1),
      column(ShardId, StringType, -1),
      Column(StructField("userIdentity",
          StructType(Seq(StructField("type", StringType),
              StructField("principalId",
                StringType)))), -1),
      column("keys", DynamoDbStreams.imageType(variant), -1),
      Column(StructField("newImage", DynamoDbStreams.imageType(variant)), -1),
      Column(StructField("oldImage", DynamoDbStreams.imageType(variant)), -1)) {

    override def row(
        data: Array[Byte],
        stream: UTF8String,
        shardId: UTF8String,
        partitionKey: UTF8String,
        sequenceNumber: UTF8String,
        subSequence: Long,
        arrivalMicros: Long): InternalRow = {
      val f = StreamRecordCodec.decode(data)
      def text(s: Option[String]): UTF8String = s.map(UTF8String.fromString).orNull
      def image(s: Option[String]): Any = if (variant) s.map(Variants.ofDynamoDbItem).orNull else text(s)
      val identity =
        if (f.identityType.isEmpty && f.identityPrincipal.isEmpty) null
        else new GenericInternalRow(Array[Any](text(f.identityType), text(f.identityPrincipal)))
      new GenericInternalRow(Array[Any](UTF8String.fromString(f.eventId), UTF8String.fromString(f.eventName),
          arrivalMicros, sequenceNumber, f.sizeBytes, UTF8String.fromString(f.streamViewType), shardId, identity,
          if (variant) Variants.ofDynamoDbItem(partitionKey.toString) else partitionKey, image(f.newImage),
          image(f.oldImage)))
    }
  }

  object DynamoDbStreams {
    private def imageType(variant: Boolean): DataType = if (variant) Variants.dataType else StringType
  }

  /** The columns of a read opened with `dialect`'s format; `variantImages`: DynamoDB's images as VARIANT. */
  def of(dialect: Dialect, variantImages: Boolean = false): KinesisSchema = dialect match {
    case Dialect.Kinesis => Databricks
    case Dialect.AwsKinesis => Awslabs
    case Dialect.DynamoDbStreams => DynamoDbStreams(variantImages)
  }
}
