package io.sparkkinesis

import org.apache.spark.sql.{SparkSession, SparkSessionExtensions}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.catalyst.rules.Rule

/**
 * The connector's additions to Spark SQL, for `spark.sql.extensions=io.sparkkinesis.KinesisSparkExtensions`
 * (`configure_spark_with_kinesis` in Python sets it): the table-valued function `read_kinesis` ([[ReadKinesis]]),
 * the functions `from_glue_schema_registry` and `to_glue_schema_registry` (docs/schema-registry.md),
 * and, where Spark has hint rules to run before its own resolution (4.x), the rule that makes
 * `STREAM read_kinesis(...)` a streaming read (Spark 4.2+ parses it).
 */
class KinesisSparkExtensions extends (SparkSessionExtensions => Unit) {
  override def apply(extensions: SparkSessionExtensions): Unit = {
    extensions.injectTableFunction(ReadKinesis.description)
    registry.SchemaRegistryFunctions.all.foreach(extensions.injectFunction)
    val streaming: SparkSession => Rule[LogicalPlan] = session => new ReadKinesis.Streaming(session)
    // Looked up by name: Spark 3.5's extensions have no hint rules (and no STREAM before a function call).
    scala.util.Try(classOf[SparkSessionExtensions].getMethod("injectHintResolutionRule", classOf[Function1[_, _]]))
      .foreach(_.invoke(extensions, streaming))
  }
}
