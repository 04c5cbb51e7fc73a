package io.sparkkinesis.writer

import java.nio.charset.StandardCharsets

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.types._

import io.sparkkinesis.config.Dialect
import io.sparkkinesis.errors.KinesisErrors

/**
 * Where the sink finds each part of a record in an input row, checked once when the write starts. Optional
 * columns are absent (-1). The partition key comes from the `partitionKey` column, else from the column
 * named by the `partitionKeyColumn` option (string or integer), else it is random per record. A row's target
 * stream comes from the format's stream column ([[Dialect.sinkStreamColumn]]: `stream` under `kinesis`, the
 * column a read gives; none under `aws-kinesis`, as in the awslabs sink), named `streamColumn` in errors, else
 * from the `streamName` option.
 */
private[sparkkinesis] final case class SinkSchema(
    dataIndex: Int,
    dataIsString: Boolean,
    partitionKeyIndex: Int,
    partitionKeyType: DataType,
    explicitHashKeyIndex: Int,
    streamIndex: Int,
    streamColumn: String = Dialect.Kinesis.streamColumn) {

  def hasPartitionKey: Boolean = partitionKeyIndex >= 0

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

  /** The row's target stream (a name or an ARN), or null when the input has no stream column or the row has none. */
  def stream(row: InternalRow): String =
    if (streamIndex < 0 || row.isNullAt(streamIndex)) null
    else row.getUTF8String(streamIndex).toString
}

private[sparkkinesis] object SinkSchema {

  /** The columns the sink takes under `dialect`'s format, as its errors list them. */
  def expected(dialect: Dialect): String = "data (binary or string, required), partitionKey (string, optional), " +
    "explicitHashKey (string, optional)" + dialect.sinkStreamColumn.fold("")(c => s", $c (string, optional)")

  private val Data = "data"
  private val PartitionKey = "partitionKey"
  private val ExplicitHashKey = "explicitHashKey"
  private val KeyTypes: Set[DataType] = Set(StringType, LongType, IntegerType, ShortType, ByteType)
  private val StreamColumns = Set(Dialect.Kinesis.streamColumn, Dialect.AwsKinesis.streamColumn)

  /** Whether the input has the column `dialect`'s sink takes a row's stream from (its type is checked by [[of]]). */
  def hasStreamColumn(schema: StructType, dialect: Dialect): Boolean =
    dialect.sinkStreamColumn.exists(schema.fieldNames.contains)

  /**
   * Resolves the columns of a write of `dialect`'s format, failing with the expected schema when a column is
   * unknown, missing or mistyped.
   */
  def of(
      schema: StructType,
      partitionKeyColumn: Option[String],
      ignoreUnused: Boolean = false,
      dialect: Dialect = Dialect.Kinesis): SinkSchema = {
    val names = schema.fieldNames.toSeq
    val streamColumn = dialect.sinkStreamColumn
    val columns = SinkSchema.expected(dialect)
    val expected = partitionKeyColumn.fold(columns)(c =>
      s"$columns, and '$c' (named by option 'partitionKeyColumn': string or integer)")
    def fail(problem: String, fix: String) = KinesisErrors.invalidSinkSchema(problem, s"$expected. $fix")

    names.groupBy(identity).collectFirst { case (n, all) if all.size > 1 => n }.foreach { n =>
      throw fail(s"Column '$n' appears more than once.", "Give each column a distinct name.")
    }
    val known = Set(Data, PartitionKey, ExplicitHashKey) ++ streamColumn ++ partitionKeyColumn
    val extra = names.filterNot(known.contains)
    // A stream column this format's sink does not route by: say how this format picks a row's stream.
    for (other <- extra.find(StreamColumns.contains) if !ignoreUnused)
      throw fail(s"Unexpected column $other.",
        streamColumn match {
          case Some(c) => s"Under format '${dialect.format}' a row's target stream is column '$c' (the name a read " +
              s"of this format gives it): rename '$other' to '$c', or drop it to write to the stream of option " +
              "'streamName'."
          case None => s"Under format '${dialect.format}' every row goes to the stream of option 'streamName', as in " +
              s"the awslabs sink: drop '$other', or write with format 'kinesis' and a '${Dialect.Kinesis.streamColumn}' " +
              "column to pick each row's stream."
        })
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
      requireString(ExplicitHashKey), streamColumn.fold(-1)(requireString), dialect.streamColumn)
  }

  /** Bytes a record counts against the limits: partition key (UTF-8) plus data. */
  def recordBytes(partitionKey: String, data: Array[Byte]): Long =
    partitionKey.getBytes(StandardCharsets.UTF_8).length.toLong + data.length
}
