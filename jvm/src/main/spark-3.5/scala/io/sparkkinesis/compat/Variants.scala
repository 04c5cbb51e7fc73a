package io.sparkkinesis.compat

import org.apache.spark.sql.types.DataType

/** VARIANT values: Spark 3.5 has no such type (`imageColumnType=variant` is refused by name before a read). */
private[sparkkinesis] object Variants {

  /** Whether this Spark has the VARIANT type. */
  val supported: Boolean = false

  def dataType: DataType = throw new UnsupportedOperationException("Spark 3.5 has no VARIANT type")

  def ofDynamoDbItem(json: String): AnyRef = throw new UnsupportedOperationException("Spark 3.5 has no VARIANT type")
}
