package io.sparkkinesis.compat

import org.apache.spark.sql.Column
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.sparkkinesis.ColumnBridge

/** Between a DataFrame column and its Catalyst expression: Spark 4's classic session converts between them. */
private[sparkkinesis] object Columns {
  def of(e: Expression): Column = ColumnBridge.column(e)
  def expression(c: Column): Expression = ColumnBridge.expression(c)
}
