package io.sparkkinesis.errors

import org.apache.spark.ErrorClassesJsonReader

/**
 * The connector's error conditions: each one's message template and SQLSTATE, in the jar's
 * `error/kinesis-error-conditions.json`, read with Spark's own reader (the one Spark's connectors use), which fills
 * `<name>` placeholders from an error's message parameters.
 */
private[sparkkinesis] object ErrorConditions {

  /** Where the conditions are, in the jar and on the classpath of the tests. */
  val Resource = "error/kinesis-error-conditions.json"

  private lazy val reader: ErrorClassesJsonReader = {
    val url = Option(getClass.getClassLoader.getResource(Resource))
      .getOrElse(throw new IllegalStateException(s"$Resource is missing from the spark-kinesis jar"))
    new ErrorClassesJsonReader(Seq(url))
  }

  /** What `getMessage` says: `[CONDITION]` and the condition's template with `parameters` filled in. */
  def message(condition: String, parameters: Map[String, String]): String =
    s"[$condition] ${reader.getErrorMessage(condition, parameters)}"

  def sqlState(condition: String): String = reader.getSqlState(condition)
}
