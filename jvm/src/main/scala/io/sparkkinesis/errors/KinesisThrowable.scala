package io.sparkkinesis.errors

/**
 * What the connector's two exception classes share: a condition of `error/kinesis-error-conditions.json`, the
 * parameters its message template was filled with (never a secret: see [[KinesisErrors]]), and its SQLSTATE.
 * [[ConditionNaming]] (one per Spark line) tells Spark the condition's name.
 */
private[errors] trait KinesisThrowable extends ConditionNaming {
  def condition: String

  /** Whether this is an error of `c` (code that reacts to an error compares conditions this way, never by text). */
  def is(c: Condition): Boolean = condition == c.name
  protected def parameters: Map[String, String]

  override def getMessageParameters: java.util.Map[String, String] = {
    val map = new java.util.HashMap[String, String]()
    parameters.foreach { case (k, v) => map.put(k, v) }
    map
  }

  override def getSqlState: String = ErrorConditions.sqlState(condition)
}
