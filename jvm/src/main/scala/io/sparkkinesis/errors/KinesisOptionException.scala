package io.sparkkinesis.errors

/**
 * Thrown for input the user can fix (options, schema): reported when the query is defined or starts. A Spark error
 * condition (`SparkThrowable`): `condition` is the condition's name, such as `KINESIS_UNKNOWN_OPTION`, which Spark
 * also reads as `getCondition` (Spark 4) or `getErrorClass` (Spark 3.5), with `getSqlState` and
 * `getMessageParameters`; docs/troubleshooting.md lists them.
 */
final class KinesisOptionException private[sparkkinesis] (
    val condition: String,
    protected val parameters: Map[String, String])
  extends IllegalArgumentException(ErrorConditions.message(condition, parameters))
  with KinesisThrowable
