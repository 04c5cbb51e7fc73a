package io.sparkkinesis

import org.apache.spark.sql.SparkSessionExtensions

/**
 * The connector's additions to Spark SQL, for `spark.sql.extensions=io.sparkkinesis.KinesisSparkExtensions`
 * (`configure_spark_with_kinesis` in Python sets it): the table-valued function `read_kinesis` ([[ReadKinesis]]).
 */
class KinesisSparkExtensions extends (SparkSessionExtensions => Unit) {
  override def apply(extensions: SparkSessionExtensions): Unit =
    extensions.injectTableFunction(ReadKinesis.description)
}
