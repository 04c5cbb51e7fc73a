package io.sparkkinesis

import io.sparkkinesis.compat.CollectionConverters._

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.FunctionIdentifier
import org.apache.spark.sql.catalyst.analysis.UnresolvedTableValuedFunction
import org.apache.spark.sql.catalyst.expressions.{Expression, ExpressionInfo, NamedArgumentExpression}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.sparkkinesis.compat.SparkShim
import io.sparkkinesis.config.{Dialect, TableOptions}
import io.sparkkinesis.errors.KinesisErrors

/**
 * `read_kinesis(streamName => 'orders', region => 'eu-west-1', ...)`: a batch read of streams in SQL, its named
 * arguments the read's options under format `kinesis`, so Databricks' names (`awsAccessKey`, ...) work as they do
 * there. It is the DataFrame API's `spark.read.format("kinesis").options(...).load()`: the options are checked and the
 * streams looked up when the query is analysed. `STREAM read_kinesis(...)` (Spark 4.2+ parses it) is the streaming
 * read, `spark.readStream.format("kinesis").options(...).load()`: [[Streaming]] turns the call into that before
 * Spark resolves it as a table function, which would make it a batch read.
 */
private[sparkkinesis] object ReadKinesis {
  val Name = "read_kinesis"

  private val Example = "read_kinesis(streamName => 'orders', region => 'eu-west-1')"

  val description: (FunctionIdentifier, ExpressionInfo, Seq[Expression] => LogicalPlan) =
    (FunctionIdentifier(Name), new ExpressionInfo(classOf[KinesisSparkExtensions].getName, Name), plan)

  /** The read the arguments ask for. */
  def plan(arguments: Seq[Expression]): LogicalPlan = {
    val options = new CaseInsensitiveStringMap(optionsOf(arguments).asJava)
    val provider = new KinesisSourceProvider(Dialect.Kinesis)
    val table = provider.getTable(provider.inferSchema(options), Array.empty, options)
    // The table carries the options (its properties), so the relation needs none of its own; and the form of
    // `create` that takes them differs between Spark 4.0 and 4.1+ (a time-travel argument with a default).
    DataSourceV2Relation.create(table, None, None)
  }

  /**
   * The analyzer rule for `STREAM read_kinesis(...)`, run with the hint rules, before Spark's own resolution of table
   * functions (which leaves `STREAM` out): the call becomes the streaming read of its options.
   */
  final class Streaming(session: SparkSession) extends Rule[LogicalPlan] {
    override def apply(plan: LogicalPlan): LogicalPlan = plan.resolveOperatorsUp {
      case call: UnresolvedTableValuedFunction
          if call.name.lastOption.exists(_.equalsIgnoreCase(Name)) && SparkShim.streamingCall(call) =>
        SparkShim.logicalPlan(session.readStream.format(Dialect.Kinesis.format)
            .options(optionsOf(call.functionArgs)).load())
    }
  }

  /** Each argument `name => constant` as an option; anything else fails naming the argument and the form. */
  private def optionsOf(arguments: Seq[Expression]): Map[String, String] =
    arguments.zipWithIndex.map {
      case (NamedArgumentExpression(name, value), _) =>
        val text = if (value.foldable) Option(value.eval()).map(_.toString) else None
        name -> text.getOrElse(throw KinesisErrors.invalidOptionValue(name, value.sql,
            s"a constant (a string, number or boolean), as in $Example",
            secret = TableOptions.isSecret(name, Dialect.Kinesis)))
      case (other, i) =>
        throw KinesisErrors.invalidOptionValue(s"argument ${i + 1} of $Name", other.sql,
          s"a named argument, name => value, with an option's name (docs/options.md), as in $Example", secret = true)
    }.toMap
}
