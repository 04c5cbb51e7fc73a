package io.sparkkinesis.payload.registry

import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.aws.SchemaId
import io.sparkkinesis.errors.KinesisOptionException
import io.sparkkinesis.testing.ErrorText.assertMentions

class RegistrySettingsSuite extends AnyFunSuite {
  private val base = Map("region" -> "eu-west-1")

  test("a registered schema, its version, and the connection's region and credentials") {
    val s = RegistrySettings.parse(base ++ Map("SCHEMANAME" -> "orders", "registryName" -> "shop",
      "schemaVersionNumber" -> "3", "awsAccessKeyId" -> "AKIDEXAMPLE", "awsSecretKey" -> "very-secret",
      "registryEndpointUrl" -> "http://127.0.0.1:5000", "mode" -> "PERMISSIVE", "compression" -> "zlib"))
    assert(s.schema.contains(SchemaId("shop", "orders")) && s.versionNumber.contains(3L))
    assert(s.connection.region == "eu-west-1" && s.connection.endpointUrl.contains("http://127.0.0.1:5000"))
    assert(s.permissive && s.compress && s.framed && !s.autoRegistration)
    assert(!s.toString.contains("very-secret") && !s.toString.contains("AKIDEXAMPLE"))
  }

  test("defaults: the latest version of default-registry, framed, failfast") {
    val s = RegistrySettings.parse(base + ("schemaName" -> "orders"))
    assert(s.schema.contains(SchemaId("default-registry", "orders")) && s.versionNumber.isEmpty)
    assert(s.framed && !s.permissive && !s.compress && s.errorField == "_error")
  }

  test("schemaDefinition is kept as given: the registry compares the text byte for byte") {
    val proto = "syntax = \"proto3\";\nmessage A { int32 x = 1; }\n"
    assert(RegistrySettings.parse(base ++ Map("schemaDefinition" -> proto, "dataFormat" -> "protobuf")).definition
        .contains(proto))
    assertMentions(intercept[KinesisOptionException](RegistrySettings.parse(base + ("schemaDefinition" -> " \n"))),
      "schemaDefinition")
  }

  test("errors name the option and what to do") {
    def error(options: Map[String, String]) = intercept[KinesisOptionException](RegistrySettings.parse(base ++ options))
    assertMentions(error(Map.empty), "[KINESIS_MISSING_OPTION]", "schemaName", "schemaDefinition")
    assertMentions(error(Map("schemaName" -> "o", "schemaVersionNumber" -> "0")), "schemaVersionNumber",
      "a version number from 1, or latest")
    assertMentions(error(Map("schemaDefinition" -> "\"string\"", "schemaVersionNumber" -> "2")),
      "[KINESIS_CONFLICTING_OPTIONS]", "set 'schemaName' too")
    assertMentions(error(Map("schemaName" -> "o", "endpointUrl" -> "http://127.0.0.1:1")),
      "[KINESIS_OPTION_NOT_APPLICABLE]", "'endpointUrl'", "registryEndpointUrl")
    assertMentions(error(Map("schemaName" -> "o", "streamName" -> "s")), "[KINESIS_OPTION_NOT_APPLICABLE]",
      "streamName")
    assertMentions(error(Map("schemaName" -> "o", "initialPosition" -> "latest")), "[KINESIS_OPTION_NOT_APPLICABLE]")
    assertMentions(error(Map("schemaName" -> "o", "framing" -> "confluent")), "'framing'", "glue, none")
  }

  test("a catalog, a read and a write take none of the functions' options") {
    val e = intercept[KinesisOptionException](io.sparkkinesis.config.ParsedOptions(
        Map("streamName" -> "s", "schemaName" -> "orders"), io.sparkkinesis.config.Scope.Source))
    assertMentions(e, "[KINESIS_OPTION_NOT_APPLICABLE]", "schemaName")
  }
}
