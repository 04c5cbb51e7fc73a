package io.sparkkinesis.sink

import java.nio.charset.StandardCharsets

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.types._

import io.sparkkinesis.errors.KinesisErrors

/**
 * Where the sink finds each part of a record in an input row, checked once when the write starts. Optional
 * columns are absent (-1). The partition key comes from the `partitionKey` column, else from the column
 * named by the `partitionKeyColumn` option (string or integer), else it is random per record.
 */
private[sparkkinesis] final case class SinkSchema(
    dataIndex: Int,
    dataIsString: Boolean,
    partitionKeyIndex: Int,
    partitionKeyType: DataType,
    explicitHashKeyIndex: Int,
    streamNameIndex: Int) {

  def hasPartitionKey: Boolean = partitionKeyIndex >= 0
  def hasStreamName: Boolean = streamNameIndex >= 0

  def data(row: InternalRow): Array[Byte] =
    if (row.isNullAt(dataIndex)) null
    else if (dataIsString) row.getUTF8String(dataIndex).getBytes
    else row.getBinary(dataIndex)

  /** The row's partition key, or null when the column is null (only call when [[hasPartitionKey]]). */
  def partitionKey(row: InternalRow): String =
    if (row.isNullAt(partitionKeyIndex)) null
    else partitionKeyType match {
      case StringType => row.getUTF8String(partitionKeyIndex).toString
      case LongType => row.getLong(partitionKeyIndex).toString
      case IntegerType => row.getInt(partitionKeyIndex).toString
      case ShortType => row.getShort(partitionKeyIndex).toString
      case ByteType => row.getByte(partitionKeyIndex).toString
      case other => throw new IllegalStateException(s"unchecked partition key type $other")
    }

  def explicitHashKey(row: InternalRow): String =
    if (explicitHashKeyIndex < 0 || row.isNullAt(explicitHashKeyIndex)) null
    else row.getUTF8String(explicitHashKeyIndex).toString

  def streamName(row: InternalRow): String =
    if (streamNameIndex < 0 || row.isNullAt(streamNameIndex)) null
    else row.getUTF8String(streamNameIndex).toString
}

private[sparkkinesis] object SinkSchema {
  val Expected: String = "data (binary or string, required), partitionKey (string, optional), " +
    "explicitHashKey (string, optional), streamName (string, optional)"

  private val Data = "data"
  private val PartitionKey = "partitionKey"
  private val ExplicitHashKey = "explicitHashKey"
  private val StreamName = "streamName"
  private val KeyTypes: Set[DataType] = Set(StringType, LongType, IntegerType, ShortType, ByteType)

  /** Whether the input has a `streamName` column (its type is checked by [[of]]). */
  def hasStreamNameColumn(schema: StructType): Boolean = schema.fieldNames.contains(StreamName)

  /** Resolves the columns, failing with the expected schema when a column is unknown, missing or mistyped. */
  def of(schema: StructType, partitionKeyColumn: Option[String], ignoreUnused: Boolean = false): SinkSchema = {
    val names = schema.fieldNames.toSeq
    val expected = partitionKeyColumn.fold(Expected)(c =>
      s"$Expected, and '$c' (named by option " +
        "'partitionKeyColumn': string or integer)")
    def fail(problem: String, fix: String) = KinesisErrors.invalidSinkSchema(problem, s"$expected. $fix")

    names.groupBy(identity).collectFirst { case (n, all) if all.size > 1 => n }.foreach { n =>
      throw fail(s"Column '$n' appears more than once.", "Give each column a distinct name.")
    }
    val known = Set(Data, PartitionKey, ExplicitHashKey, StreamName) ++ partitionKeyColumn
    val extra = names.filterNot(known.contains)
    if (extra.nonEmpty && !ignoreUnused)
      throw fail(s"Unexpected column(s) ${extra.mkString(", ")}.",
        "Select only these columns, e.g. df.selectExpr(\"to_json(struct(*)) AS data\", \"CAST(id AS STRING) AS partitionKey\"), " +
          "or set option 'unusedColumns' to 'ignore' to leave the others out.")
    if (partitionKeyColumn.isDefined && names.contains(PartitionKey) && !partitionKeyColumn.contains(PartitionKey))
      throw KinesisErrors.conflictingOptions(s"The input has a 'partitionKey' column and option 'partitionKeyColumn' " +
        s"names '${partitionKeyColumn.get}'; use one of them.")

    def indexOf(name: String): Int = names.indexOf(name)
    def typeOf(i: Int): DataType = schema(i).dataType
    def requireString(name: String): Int = {
      val i = indexOf(name)
      if (i >= 0 && typeOf(i) != StringType)
        throw fail(s"Column '$name' has type ${typeOf(i).simpleString}.", s"Cast it: CAST($name AS STRING) AS $name.")
      i
    }

    val d = indexOf(Data)
    if (d < 0) throw fail(s"Column '$Data' is missing.", "Add it, e.g. to_json(struct(*)) AS data.")
    val dataIsString = typeOf(d) match {
      case BinaryType => false
      case StringType => true
      case other => throw fail(s"Column 'data' has type ${other.simpleString}.",
          "Cast it, e.g. to_json(...) or CAST(... AS STRING).")
    }
    val keyColumn = partitionKeyColumn.getOrElse(PartitionKey)
    val pk = indexOf(keyColumn)
    if (partitionKeyColumn.isDefined && pk < 0)
      throw fail(s"Column '$keyColumn' named by option 'partitionKeyColumn' is missing.",
        "Fix the option or add the column.")
    val keyTypes = if (partitionKeyColumn.isDefined) KeyTypes else Set[DataType](StringType)
    if (pk >= 0 && !keyTypes.contains(typeOf(pk)))
      throw fail(s"Column '$keyColumn' (the partition key) has type ${typeOf(pk).simpleString}.",
        s"Cast it: CAST($keyColumn AS STRING).")
    SinkSchema(d, dataIsString, pk, if (pk >= 0) typeOf(pk) else StringType,
      requireString(ExplicitHashKey), requireString(StreamName))
  }

  /** Bytes a record counts against the limits: partition key (UTF-8) plus data. */
  def recordBytes(partitionKey: String, data: Array[Byte]): Long =
    partitionKey.getBytes(StandardCharsets.UTF_8).length.toLong + data.length
}
