package io.sparkkinesis.sink

import java.nio.charset.StandardCharsets

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.types._

import io.sparkkinesis.errors.KinesisErrors

/**
 * The input columns the sink accepts, checked when the write starts: `data` (binary or string, required) and
 * `partitionKey` (string, required). Positions are resolved once so each row is read without lookups.
 */
final case class SinkSchema(dataIndex: Int, dataIsString: Boolean, partitionKeyIndex: Int) {

  def data(row: InternalRow): Array[Byte] =
    if (row.isNullAt(dataIndex)) null
    else if (dataIsString) row.getUTF8String(dataIndex).getBytes
    else row.getBinary(dataIndex)

  def partitionKey(row: InternalRow): String =
    if (row.isNullAt(partitionKeyIndex)) null else row.getUTF8String(partitionKeyIndex).toString
}

object SinkSchema {
  val Expected = "data (binary or string, required), partitionKey (string, required)"

  def of(schema: StructType): SinkSchema = {
    val names = schema.fieldNames.toSeq
    val extra = names.filterNot(n => n == "data" || n == "partitionKey")
    if (extra.nonEmpty)
      throw KinesisErrors.invalidSinkSchema(s"Unexpected column(s) ${extra.mkString(", ")}.", Expected +
        ". Select only these columns, e.g. df.selectExpr(\"to_json(struct(*)) AS data\", \"id AS partitionKey\").")
    def index(name: String): Int = {
      val i = names.indexOf(name)
      if (i < 0) throw KinesisErrors.invalidSinkSchema(s"Column '$name' is missing.", Expected + ".")
      i
    }
    val d = index("data")
    val dataIsString = schema(d).dataType match {
      case BinaryType => false
      case StringType => true
      case other => throw KinesisErrors.invalidSinkSchema(
        s"Column 'data' has type ${other.simpleString}.", Expected + "; cast it, e.g. to_json(...) or CAST(... AS STRING).")
    }
    val pk = index("partitionKey")
    if (schema(pk).dataType != StringType)
      throw KinesisErrors.invalidSinkSchema(s"Column 'partitionKey' has type ${schema(pk).dataType.simpleString}.",
        Expected + "; cast it, e.g. CAST(id AS STRING) AS partitionKey.")
    SinkSchema(d, dataIsString, pk)
  }

  /** Bytes a record counts against the limits: partition key (UTF-8) plus data. */
  def recordBytes(partitionKey: String, data: Array[Byte]): Long =
    partitionKey.getBytes(StandardCharsets.UTF_8).length.toLong + data.length
}
