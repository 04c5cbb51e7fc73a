package io.sparkkinesis.errors

import org.apache.spark.SparkThrowable

/** Spark 3.5 asks a `SparkThrowable` for its condition as `getErrorClass` (Spark 4 renamed it `getCondition`). */
private[errors] trait ConditionNaming extends SparkThrowable {
  def condition: String

  override def getErrorClass: String = condition
}
