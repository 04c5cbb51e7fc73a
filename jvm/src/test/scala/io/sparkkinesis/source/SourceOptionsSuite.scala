package io.sparkkinesis.source

import io.sparkkinesis.compat.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.aws.{ConsumerSpec, CredentialsConfig, StreamConsumers, StreamRef}
import io.sparkkinesis.errors.KinesisOptionException
import io.sparkkinesis.offsets.StartPosition

class SourceOptionsSuite extends AnyFunSuite {
  private val local = Map("endpointUrl" -> "http://127.0.0.1:4566", "region" -> "us-east-1")

  private def parse(options: Map[String, String]): SourceOptions = SourceOptions.parse((local ++ options).asJava)

  test("stream names and ARNs, comma-separated, in order") {
    val arn = "arn:aws:kinesis:us-east-1:123456789012:stream/clicks"
    val o = parse(Map("streamName" -> s" orders , $arn"))
    assert(o.streams == Seq(StreamRef("orders", None, None), StreamRef("clicks", Some(arn), Some("us-east-1"))))
  }

  test("the region comes from an ARN when not given") {
    val o = SourceOptions.parse(Map("streamName" -> "arn:aws:kinesis:eu-west-1:123456789012:stream/a").asJava)
    assert(o.connection.region == "eu-west-1")
  }

  test("a region that contradicts an ARN is refused") {
    val e = intercept[KinesisOptionException](
      SourceOptions.parse(Map("streamName" -> "arn:aws:kinesis:eu-west-1:123456789012:stream/a",
          "region" -> "us-east-1").asJava))
    assert(e.getMessage.contains("'eu-west-1'"))
  }

  test("bad stream names are explained") {
    val e = intercept[KinesisOptionException](parse(Map("streamName" -> "has space")))
    assert(e.getMessage.startsWith("[KINESIS_INVALID_STREAM_NAME] Stream 'has space'"))
  }

  test("at_timestamp needs initialTimestamp") {
    val e = intercept[KinesisOptionException](parse(Map("streamName" -> "s", "initialPosition" -> "at_timestamp")))
    assert(e.getMessage.contains("Option 'initialTimestamp' is required"))
    val o = parse(Map("streamName" -> "s", "initialPosition" -> "AT_TIMESTAMP", "initialTimestamp" -> "1000"))
    assert(o.initialPosition.contains(StartPosition.AtTimestamp(1000)))
  }

  test("an initialTimestamp in the future fails naming it, instead of the service's refusal at the first read") {
    val future = java.time.Instant.now().plusSeconds(3600)
    val e = intercept[KinesisOptionException](
      parse(Map("streamName" -> "s", "initialPosition" -> "at_timestamp", "initialTimestamp" -> future.toString)))
    assert(e.condition == "KINESIS_INVALID_OPTION_VALUE")
    assert(e.getMessage.contains("Option 'initialTimestamp'") && e.getMessage.contains("a time that has passed"),
      e.getMessage)
  }

  test("static keys need both halves and are never printed") {
    val e = intercept[KinesisOptionException](parse(Map("streamName" -> "s", "awsAccessKeyId" -> "AKIAEXAMPLE")))
    assert(e.getMessage.contains("'awsSecretKey' is not"))
    assert(!e.getMessage.contains("AKIAEXAMPLE"))
    val o = parse(Map("streamName" -> "s", "awsAccessKeyId" -> "AKIAEXAMPLE", "awsSecretKey" -> "topsecret"))
    assert(o.connection.credentials.isInstanceOf[CredentialsConfig.StaticKeys])
    assert(!o.toString.contains("topsecret") && !o.toString.contains("AKIAEXAMPLE"))
  }

  test("endpointUrl must be an absolute URL") {
    val e = intercept[KinesisOptionException](SourceOptions.parse(Map("streamName" -> "s",
          "endpointUrl" -> "localhost:4566").asJava))
    assert(e.getMessage.contains("Option 'endpointUrl'"))
  }

  test("initialShardPositions: after a sequence number, or at one; other shards keep initialPosition") {
    val o = parse(Map("streamName" -> "orders,clicks",
        "initialShardPositions" ->
          """{"orders": {"shardId-000000000000": "4959", "shardId-000000000001": {"at": "4960"}}, "clicks": {}}"""))
    val k = io.sparkkinesis.offsets.ShardKey("orders", _: String)
    assert(o.shardStarts.byShard == Map(k("shardId-000000000000") -> StartPosition.AfterSequence("4959"),
      k("shardId-000000000001") -> StartPosition.AtSequence("4960")))
    assert(o.shardStarts.get(k("shardId-000000000002")).isEmpty)
  }

  test("initialShardPositions that cannot be used are refused with the option's name, the reason and an example") {
    def refused(json: String) =
      intercept[KinesisOptionException](parse(Map("streamName" -> "orders", "initialShardPositions" -> json))).getMessage
    val notJson = refused("shardId-000000000000=4959")
    assert(notJson.startsWith("[KINESIS_INVALID_OPTION_VALUE] Option 'initialShardPositions'"), notJson)
    assert(notJson.contains("it is not a JSON object") && notJson.contains("for example {\"orders\""), notJson)
    assert(refused("""{"payments": {}}""").contains("'payments' is not one of the streams read: orders"))
    assert(refused("""{"orders": {"shardId-000000000000": "latest"}}""").contains(
        "the position of shardId-000000000000 is neither a sequence number"))
    assert(refused("""{"orders": {"shardId-000000000000": {"after": "1"}}}""").contains("shardId-000000000000"))
    val unknown = intercept[KinesisOptionException](parse(Map("streamName" -> "orders",
          "initialShardPositions" -> """{"orders": {"shardId-000000000009": "1"}}""")).shardStarts
        .checkKnown(Set(io.sparkkinesis.offsets.ShardKey("orders", "shardId-000000000000")))).getMessage
    assert(unknown.contains("'orders/shardId-000000000009'") && unknown.contains("were not found"), unknown)
  }

  test("consumerMode: polling by default; efo with a managed consumer, named or named after the checkpoint") {
    assert(parse(Map("streamName" -> "s")).consumer.isEmpty)
    assert(parse(Map("streamName" -> "s", "consumerMode" -> "efo")).consumer ==
      Some(ConsumerSpec.Managed(None, deregisterOnStop = false)))
    assert(parse(Map("streamName" -> "a,b", "consumerMode" -> "efo", "consumerName" -> "orders-etl.v2",
        "requireConsumerDeregistration" -> "true")).consumer ==
      Some(ConsumerSpec.Managed(Some("orders-etl.v2"), deregisterOnStop = true)))
    val one = StreamConsumers.defaultName("s3://bucket/checkpoints/orders/sources/0")
    assert(one.matches("spark-kinesis-[0-9a-f]{16}"))
    assert(one == StreamConsumers.defaultName("s3://bucket/checkpoints/orders/sources/0"), "stable across restarts")
    assert(one != StreamConsumers.defaultName("s3://bucket/checkpoints/clicks/sources/0"), "another query, another")
  }

  test("a registered consumer by name, or by ARN for the one stream it belongs to") {
    assert(parse(Map("streamName" -> "a,b", "consumerMode" -> "efo", "registeredConsumerId" -> "shared")).consumer ==
      Some(ConsumerSpec.Registered("shared", byArn = false)))
    val arn = "arn:aws:kinesis:us-east-1:123456789012:stream/orders/consumer/etl:1700000000"
    assert(parse(Map("streamName" -> "orders", "consumerMode" -> "efo", "registeredConsumerId" -> arn,
        "registeredConsumerIdType" -> "arn")).consumer == Some(ConsumerSpec.Registered(arn, byArn = true)))
  }

  test("fan-out options that cannot be used are refused, naming the options and what to do") {
    def error(options: (String, String)*): String =
      intercept[KinesisOptionException](parse(Map("streamName" -> "orders") ++ options)).getMessage
    assert(error("consumerName" -> "x").contains("Option 'consumerName' is for enhanced fan-out: set consumerMode=efo"))
    assert(error("consumerMode" -> "efo", "registeredConsumerId" -> "x", "consumerName" -> "y")
        .contains("Option 'consumerName' is for a consumer the connector manages"))
    assert(error("consumerMode" -> "efo", "registeredConsumerId" -> "x", "requireConsumerDeregistration" -> "true")
        .contains("'requireConsumerDeregistration'"))
    assert(error("consumerMode" -> "efo", "registeredConsumerIdType" -> "arn")
        .contains("Option 'registeredConsumerIdType' says how to read 'registeredConsumerId'"))
    assert(error("consumerMode" -> "efo", "consumerName" -> "has space")
        .startsWith("[KINESIS_INVALID_OPTION_VALUE] Option 'consumerName' has the value 'has space'"))
    assert(error("consumerMode" -> "efo", "registeredConsumerId" -> "etl", "registeredConsumerIdType" -> "arn")
        .contains("a consumer ARN such as arn:aws:kinesis:"))
    val arn = "arn:aws:kinesis:us-east-1:123456789012:stream/clicks/consumer/etl:1700000000"
    assert(error("consumerMode" -> "efo", "registeredConsumerId" -> arn, "registeredConsumerIdType" -> "arn")
        .contains("belongs to stream 'clicks', but 'streamName' names 'orders'"))
    assert(error("consumerMode" -> "fanout").contains("Option 'consumerMode'"))
  }
}
