package io.sparkkinesis.errors

/**
 * Thrown for failures while a query runs (service errors, lost data, retry budgets spent). A Spark error condition
 * (`SparkThrowable`), like [[KinesisOptionException]]: `condition`, such as `KINESIS_DATA_LOSS`, is what Spark reads
 * as `getCondition` (Spark 4) or `getErrorClass` (Spark 3.5).
 */
final class KinesisException private[sparkkinesis] (
    val condition: String,
    protected val parameters: Map[String, String],
    cause: Throwable = null)
  extends RuntimeException(ErrorConditions.message(condition, parameters), cause)
  with KinesisThrowable
