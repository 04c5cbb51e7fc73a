package io.sparkkinesis.compat

import org.apache.spark.sql.Column
import org.apache.spark.sql.catalyst.expressions.Expression

/** Between a DataFrame column and its Catalyst expression: Spark 3.5's Column wraps the expression itself. */
private[sparkkinesis] object Columns {
  def of(e: Expression): Column = new Column(e)
  def expression(c: Column): Expression = c.expr
}
