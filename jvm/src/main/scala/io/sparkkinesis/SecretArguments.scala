package io.sparkkinesis

import java.lang.reflect.{InvocationHandler, InvocationTargetException, Method, Proxy}

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.analysis.UnresolvedTableValuedFunction
import org.apache.spark.sql.catalyst.expressions.{Expression, LeafExpression, Literal, NamedArgumentExpression}
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback
import org.apache.spark.sql.catalyst.parser.ParserInterface
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.execution.command.ExplainCommand
import org.apache.spark.sql.types.DataType

import io.sparkkinesis.config.{Dialect, TableOptions}

/**
 * Secrets given as `read_kinesis(...)` arguments (`awsSecretKey => '...'`, `roleExternalId => '...'`) kept out of
 * every plan Spark prints: the session's SQL parser is wrapped so that, in each plan it returns, such an argument's
 * constant becomes a [[SecretLiteral]], which evaluates to the value and prints as `*********(redacted)`. The parsed
 * plan (`EXPLAIN EXTENDED`, the Spark UI, the event log) is the first to show a statement's arguments, and it is the
 * parser's, before any rule of ours runs: hence the parser.
 *
 * The wrapper is a dynamic proxy of Spark's `ParserInterface`, so every method of every Spark line's interface
 * goes to the session's parser unchanged; only a plan that comes back is rewritten.
 */
private[sparkkinesis] object SecretArguments {

  /** The session's parser, wrapped (what `SparkSessionExtensions.injectParser` takes). */
  def wrap(delegate: ParserInterface): ParserInterface =
    Proxy.newProxyInstance(getClass.getClassLoader, Array(classOf[ParserInterface]), new Handler(delegate))
      .asInstanceOf[ParserInterface]

  /** What the wrapper calls: the session's parser (`delegate`, which a test reads to see it is wrapped once). */
  private[sparkkinesis] final class Handler(val delegate: ParserInterface) extends InvocationHandler {
    override def invoke(proxy: Any, method: Method, args: Array[AnyRef]): AnyRef = {
      val result =
        try method.invoke(delegate, (if (args == null) Array.empty[AnyRef] else args): _*)
        catch { case e: InvocationTargetException => throw e.getCause }
      result match {
        case plan: LogicalPlan => redact(plan)
        case other => other
      }
    }
  }

  /** `plan` with the secret constants of every `read_kinesis` call in it (and in an `EXPLAIN`'s query) redacted. */
  def redact(plan: LogicalPlan): LogicalPlan = plan.transformUpWithSubqueries {
    case explain: ExplainCommand => explain.copy(logicalPlan = redact(explain.logicalPlan))
    case call: UnresolvedTableValuedFunction if call.name.lastOption.exists(_.equalsIgnoreCase(ReadKinesis.Name)) =>
      call.copy(functionArgs = call.functionArgs.map(redactArgument))
  }

  private def redactArgument(argument: Expression): Expression = argument match {
    case named @ NamedArgumentExpression(name, literal: Literal) if TableOptions.isSecret(name, Dialect.Kinesis) =>
      named.copy(value = SecretLiteral(new Secret(literal)))
    case other => other
  }

  /** A secret constant, which no string form of it shows (and, being no `Product`, no JSON form of a plan either). */
  final class Secret(private[SecretArguments] val literal: Literal) {
    override def toString: String = TableOptions.Redacted
  }

  /** A constant that evaluates to its secret and prints redacted, wherever a plan or an error shows it. */
  final case class SecretLiteral(secret: Secret) extends LeafExpression with CodegenFallback {
    override def dataType: DataType = secret.literal.dataType
    override def nullable: Boolean = secret.literal.nullable
    override def foldable: Boolean = true
    override def eval(input: InternalRow): Any = secret.literal.value
    override def toString: String = TableOptions.Redacted
    override def sql: String = s"'${TableOptions.Redacted}'"
  }
}
