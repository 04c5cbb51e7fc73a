package io.sparkkinesis.errors

import org.apache.spark.SparkThrowable

/**
 * Spark 4 asks a `SparkThrowable` for its condition as `getCondition`; its `getErrorClass` (the Spark 3.5 name,
 * deprecated) answers the same.
 */
private[errors] trait ConditionNaming extends SparkThrowable {
  def condition: String

  override def getCondition: String = condition
}
