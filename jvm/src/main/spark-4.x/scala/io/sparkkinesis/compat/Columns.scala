package io.sparkkinesis.compat

import org.apache.spark.sql.Column
import org.apache.spark.sql.catalyst.expressions.Expression

/**
 * Between a DataFrame column and its Catalyst expression. Spark 4's classic session converts them in
 * `org.apache.spark.sql.classic.ExpressionUtils`, which Scala code outside Spark's packages may not name (it is
 * `private[sql]`, public in the class file): called by reflection, once per column a query defines.
 */
private[sparkkinesis] object Columns {
  private lazy val utils: AnyRef =
    Class.forName("org.apache.spark.sql.classic.ExpressionUtils$").getField("MODULE$").get(null)
  private lazy val toColumn = utils.getClass.getMethod("column", classOf[Expression])
  private lazy val toExpression = utils.getClass.getMethod("expression", classOf[Column])

  def of(e: Expression): Column = toColumn.invoke(utils, e).asInstanceOf[Column]
  def expression(c: Column): Expression = toExpression.invoke(utils, c).asInstanceOf[Expression]
}
