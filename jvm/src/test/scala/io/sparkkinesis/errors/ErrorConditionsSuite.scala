package io.sparkkinesis.errors

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, ObjectInputStream, ObjectOutputStream}
import java.lang.reflect.Method

import scala.util.Try

import com.fasterxml.jackson.databind.ObjectMapper
import org.apache.spark.SparkThrowable
import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.compat.CollectionConverters._
import io.sparkkinesis.config.{KinesisOptions, ParsedOptions, Scope}

/**
 * Every `[KINESIS_*]` error is a Spark error condition: `error/kinesis-error-conditions.json` and the errors
 * [[KinesisErrors]] builds agree, each with an SQLSTATE, and no message parameter carries a secret.
 *
 * Every method of `KinesisErrors` that returns an error is called by reflection with sample arguments, so an error
 * added there is checked without being listed here.
 */
class ErrorConditionsSuite extends AnyFunSuite {
  import ErrorConditionsSuite._

  private def assertNoSecret(e: ConnectorError, secret: String): Unit = {
    assert(!e.getMessage.contains(secret), e.getMessage)
    assert(!e.getMessageParameters.asScala.values.exists(_.contains(secret)), e.getMessageParameters)
  }

  test("every error KinesisErrors builds is a condition of the JSON, with an SQLSTATE, told to Spark") {
    assert(builders.size >= 25, builders.map(_.getName))
    for ((method, error) <- built) {
      val condition = conditionOf(error)
      val where = s"KinesisErrors.${method.getName} built $condition"
      assert(conditions.contains(condition), s"$where, which is not in ${ErrorConditions.Resource}")
      val (template, sqlState) = conditions(condition)
      assert(sqlState.exists(_.matches("[0-9A-Z]{5}")), s"$where, which has no SQLSTATE of five characters")
      // What Spark asks a SparkThrowable (getCondition on Spark 4, getErrorClass on 3.5) and what it shows.
      assert(sparkCondition(error) == condition, where)
      assert(error.getSqlState == sqlState.get, where)
      assert(error.getMessage.startsWith(s"[$condition] "), s"$where: ${error.getMessage}")
      // Each placeholder of the template is given, and no parameter goes unused.
      val placeholders = "<([a-zA-Z0-9_-]+)>".r.findAllMatchIn(template).map(_.group(1)).toSet
      assert(error.getMessageParameters.asScala.keySet == placeholders, where)
    }
  }

  test("every condition of the JSON is used by KinesisErrors") {
    val used = built.map { case (_, e) => conditionOf(e) }.toSet
    assert((conditions.keySet -- used).isEmpty, s"conditions no error uses: ${conditions.keySet -- used}")
  }

  test("the messages keep naming what to change") {
    val unknown = KinesisErrors.unknownOption("endpointURl2", Seq("endpointUrl"), "source")
    assert(unknown.getMessage == "[KINESIS_UNKNOWN_OPTION] Unknown option 'endpointURl2' for the Kinesis source. " +
      "Did you mean 'endpointUrl'? See docs/options.md for every option.")
    assert(unknown.getMessageParameters.asScala ==
      Map("option" -> "endpointURl2", "scope" -> "source", "suggestion" -> " Did you mean 'endpointUrl'?"))
    assert(KinesisErrors.missingOption("streamName", "orders").getMessage ==
      """[KINESIS_MISSING_OPTION] Option 'streamName' is required. Example: .option("streamName", "orders")""")
    val stream = KinesisErrors.invalidStreamName("bad name!")
    assert(stream.getMessage.endsWith("nor a stream ARN (arn:aws:kinesis:<region>:<account>:stream/<name>)."))
    val put = KinesisErrors.putRetriesExhausted("row 3 of partition 0 (task 7)", "orders", 5,
      Seq("ProvisionedThroughputExceededException (5)"), None)
    assert(put.getMessage.contains("The record at row 3 of partition 0 (task 7) for stream 'orders' failed 5 times; " +
        "error codes seen: ProvisionedThroughputExceededException (5); last error: none"))
    assert(put.getMessage.endsWith("Raise 'maxRetries'/'maxRetryDuration', or add shards if the stream is throttling."))
  }

  test("secret option values reach neither the parameters nor the message") {
    val shown = KinesisErrors.invalidOptionValue("awsSecretKey", SecretSample, "a non-empty string", secret = true)
    assertNoSecret(shown, SecretSample)
    assert(shown.getMessageParameters.get("value") == "(hidden)")
    // Each secret option of the registry, given a value it refuses (blank): the error hides it.
    val secrets = KinesisOptions.all.filter(_.secret)
    assert(Set("awsAccessKeyId", "awsSecretKey", "awsSessionToken").subsetOf(secrets.map(_.name).toSet))
    for (spec <- secrets) {
      val blank = " \t "
      val e = intercept[KinesisOptionException](ParsedOptions(Map(spec.name -> blank), Scope.Both).get(spec))
      assert(e.condition == "KINESIS_INVALID_OPTION_VALUE")
      assertNoSecret(e, blank)
      assert(e.getMessageParameters.get("value") == "(hidden)", spec.name)
    }
    // No condition takes a parameter named after a credential.
    for ((method, error) <- built; name <- error.getMessageParameters.asScala.keys)
      assert(!name.toLowerCase.matches(".*(secret|password|token|credential|accesskey).*"), s"${method.getName}: $name")
  }

  test("an error keeps its condition and parameters when an executor sends it to the driver") {
    val sent = KinesisErrors.dataLoss("shard shardId-000000000001 of stream 'orders'", "trimmed")
    val out = new ByteArrayOutputStream()
    new ObjectOutputStream(out).writeObject(sent)
    val got =
      new ObjectInputStream(new ByteArrayInputStream(out.toByteArray)).readObject().asInstanceOf[KinesisException]
    assert(got.condition == "KINESIS_DATA_LOSS" && got.getMessage == sent.getMessage)
    assert(got.getMessageParameters == sent.getMessageParameters && got.getSqlState == "22000")
  }
}

object ErrorConditionsSuite {
  val SecretSample = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"

  type ConnectorError = Throwable with SparkThrowable

  /** Condition -> (message template, SQLSTATE), as the jar's JSON has them. */
  lazy val conditions: Map[String, (String, Option[String])] = {
    val url = getClass.getClassLoader.getResource(ErrorConditions.Resource)
    val root = new ObjectMapper().readTree(url.openStream())
    root.fieldNames().asScala.map { name =>
      val node = root.get(name)
      val template = node.get("message").elements().asScala.map(_.asText).mkString("\n")
      name -> (template, Option(node.get("sqlState")).map(_.asText))
    }.toMap
  }

  /** Every method of KinesisErrors that returns one of the connector's errors. */
  lazy val builders: Seq[Method] = KinesisErrors.getClass.getMethods.toSeq
    .filter(m => classOf[KinesisThrowable].isAssignableFrom(m.getReturnType))
    .sortBy(_.getName)

  /** Each builder called with sample arguments of its parameters' types. */
  lazy val built: Seq[(Method, ConnectorError)] = builders.map { m =>
    val args = m.getParameterTypes.zipWithIndex.map { case (t, i) => sample(m, t, i) }
    m -> m.invoke(KinesisErrors, args: _*).asInstanceOf[ConnectorError]
  }

  private def sample(m: Method, t: Class[_], i: Int): AnyRef =
    if (t == classOf[String]) s"value$i"
    else if (t == java.lang.Integer.TYPE) Int.box(3)
    else if (t == java.lang.Long.TYPE) Long.box(42L)
    else if (t == java.lang.Double.TYPE) Double.box(1.5)
    else if (t == java.lang.Boolean.TYPE) Boolean.box(false)
    else if (t == classOf[Throwable]) new RuntimeException(s"cause$i")
    else if (t == classOf[Option[_]]) Some(new RuntimeException(s"cause$i"))
    else if (t.isAssignableFrom(classOf[List[_]])) List(s"item$i", s"other$i") // Seq, Iterable
    else throw new IllegalArgumentException(s"ErrorConditionsSuite has no sample ${t.getName} for ${m.getName}")

  def conditionOf(e: ConnectorError): String = e.asInstanceOf[KinesisThrowable].condition

  /** The condition as this Spark line asks for it: getCondition (Spark 4) or getErrorClass (3.5). */
  def sparkCondition(e: SparkThrowable): String =
    Try(classOf[SparkThrowable].getMethod("getCondition")).getOrElse(classOf[SparkThrowable].getMethod("getErrorClass"))
      .invoke(e).asInstanceOf[String]

}
