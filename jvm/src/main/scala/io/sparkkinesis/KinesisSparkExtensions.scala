package io.sparkkinesis

import java.util.{Collections, WeakHashMap}

import org.apache.spark.sql.{SparkSession, SparkSessionExtensions, SparkSessionExtensionsProvider}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.catalyst.rules.Rule

/**
 * The connector's additions to Spark SQL: the table-valued function `read_kinesis` ([[ReadKinesis]]), the functions
 * `from_glue_schema_registry` and `to_glue_schema_registry` (docs/schema-registry.md) and `from_dynamodb_json`
 * (docs/dynamodb-json.md), the parser wrapper that keeps
 * `read_kinesis`'s secret arguments out of plans ([[SecretArguments]]), and, where Spark has hint rules to run before
 * its own resolution (4.x), the rule that makes `STREAM read_kinesis(...)` a streaming read (Spark 4.2+ parses it).
 *
 * Spark (3.2+) finds them itself wherever the jar is on the classpath: the jar names this class in
 * `META-INF/services/org.apache.spark.sql.SparkSessionExtensionsProvider`. Naming it in `spark.sql.extensions` as
 * well changes nothing: a session's extensions take the additions once.
 */
class KinesisSparkExtensions extends SparkSessionExtensionsProvider {
  override def apply(extensions: SparkSessionExtensions): Unit = if (KinesisSparkExtensions.firstFor(extensions)) {
    extensions.injectTableFunction(ReadKinesis.description)
    payload.registry.SchemaRegistryFunctions.all.foreach(extensions.injectFunction)
    payload.dynamodb.DynamoDbFunctions.all.foreach(extensions.injectFunction)
    extensions.injectParser((_, parser) => SecretArguments.wrap(parser))
    val streaming: SparkSession => Rule[LogicalPlan] = session => new ReadKinesis.Streaming(session)
    // Looked up by name: Spark 3.5's extensions have no hint rules (and no STREAM before a function call).
    scala.util.Try(classOf[SparkSessionExtensions].getMethod("injectHintResolutionRule", classOf[Function1[_, _]]))
      .foreach(_.invoke(extensions, streaming))
  }
}

private object KinesisSparkExtensions {

  /** The extensions (one per session builder, by identity) the additions went into already. */
  private val applied = Collections.synchronizedMap(new WeakHashMap[SparkSessionExtensions, java.lang.Boolean]())

  /** Whether `extensions` takes the additions now: true once for each, whoever applies it first. */
  def firstFor(extensions: SparkSessionExtensions): Boolean = applied.put(extensions, java.lang.Boolean.TRUE) == null
}
