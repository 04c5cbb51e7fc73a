package org.apache.spark.sql.sparkkinesis

import org.apache.spark.sql.Column
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.classic.ExpressionUtils

/**
 * Spark 4 keeps the conversion between a classic DataFrame's column and its Catalyst expression to its own packages
 * (Spark's own connectors, such as `from_avro`, live in them). spark-kinesis's column functions need the same
 * conversion, so this one object sits in a package of Spark's; it is internal to spark-kinesis (use
 * `io.sparkkinesis.functions`).
 */
object ColumnBridge {
  def column(e: Expression): Column = ExpressionUtils.column(e)
  def expression(c: Column): Expression = ExpressionUtils.expression(c)
}
