package io.sparkkinesis.metrics

import io.sparkkinesis.compat.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.aws.{AwsConnection, CredentialsConfig}
import io.sparkkinesis.config.{ParsedOptions, Scope}
import io.sparkkinesis.errors.KinesisOptionException

/** `cloudWatchMetrics` and its options: parsed, checked, and refused with a clear error naming the option. */
class CloudWatchSettingsSuite extends AnyFunSuite {
  private val query = AwsConnection("eu-west-1", Some("http://127.0.0.1:4567"), CredentialsConfig.DefaultChain,
    cborEnabled = false)

  private def parse(options: (String, String)*): Option[CloudWatchSettings] =
    CloudWatchSettings.parse(ParsedOptions(options.toMap.asJava, Scope.Source), query)

  private def refused(options: (String, String)*): String =
    intercept[KinesisOptionException](parse(options: _*)).getMessage

  test("off by default; on, the query's region and credentials with CloudWatch's own endpoint") {
    assert(parse().isEmpty)
    val on = parse("cloudWatchMetrics" -> "true").get
    assert(on.namespace == "SparkKinesis" && on.dimensions.isEmpty)
    assert(on.connection.region == "eu-west-1" && on.connection.credentials == CredentialsConfig.DefaultChain)
    assert(on.connection.endpointUrl.isEmpty, "the Kinesis endpoint is not CloudWatch's")
    val local = parse("cloudWatchMetrics" -> "true", "cloudWatchEndpointUrl" -> "http://127.0.0.1:5000",
      "cloudWatchNamespace" -> "Team/Pipelines", "cloudWatchDimensions" -> " Environment=prod , Team=payments")
    assert(local.get.connection.endpointUrl.contains("http://127.0.0.1:5000"))
    assert(local.get.namespace == "Team/Pipelines")
    assert(local.get.dimensions == Seq("Environment" -> "prod", "Team" -> "payments"))
  }

  test("bad values and options without cloudWatchMetrics=true are refused, naming the option") {
    assert(refused("cloudWatchNamespace" -> "X").contains("'cloudWatchNamespace' is only used with"))
    val on = "cloudWatchMetrics" -> "true"
    assert(refused(on, "cloudWatchNamespace" -> "AWS/Kinesis").contains("cloudWatchNamespace"))
    assert(refused(on, "cloudWatchEndpointUrl" -> "localhost").contains("cloudWatchEndpointUrl"))
    Seq("Environment", "=prod", "Environment=", "A=1,A=2", "QueryName=mine", "StreamName=x",
      (1 to 29).map(i => s"D$i=v").mkString(",")).foreach { bad =>
      val message = refused(on, "cloudWatchDimensions" -> bad)
      assert(message.contains("cloudWatchDimensions") && message.contains("Name=value"), s"$bad: $message")
    }
    assert(parse(on, "cloudWatchDimensions" -> (1 to 28).map(i => s"D$i=v").mkString(",")).get.dimensions.size == 28)
  }
}
