package io.sparkkinesis.aws

import java.nio.charset.StandardCharsets.UTF_8

import org.scalatest.funsuite.AnyFunSuite
import com.fasterxml.jackson.databind.ObjectMapper

import io.sparkkinesis.compat.CollectionConverters._
import io.sparkkinesis.config.{ParsedOptions, Scope}
import io.sparkkinesis.errors.KinesisOptionException

/**
 * Issue 40, item 2: which host each endpoint variant resolves to, and the FIPS regions against the SDK's metadata.
 * Issue 51, item 5: every service's host as the SDK resolves it, the China partition's and FIPS included, and a
 * clear error naming the options where it resolves none, never a guessed host.
 */
class EndpointVariantsSuite extends AnyFunSuite {
  import EndpointVariants.Service._

  private val fips = EndpointVariants(Some(true), None)
  private val dualstack = EndpointVariants(None, Some(true))

  test("the FIPS regions are those where the SDK's endpoint metadata lists FIPS endpoints of Kinesis, STS and Glue") {
    val in = classOf[software.amazon.awssdk.regions.Region].getResourceAsStream(
      "/software/amazon/awssdk/regions/internal/region/endpoints.json")
    val metadata =
      try new ObjectMapper().readTree(new String(in.readAllBytes(), UTF_8))
      finally in.close()
    for (service <- Seq("kinesis", "sts", "glue")) {
      val regions = metadata.path("partitions").elements().asScala.flatMap { p =>
        p.path("services").path(service).path("endpoints").fields().asScala.collect {
          case e
              if !e.getKey.startsWith("fips-") &&
                e.getValue.path("variants").elements().asScala.exists(v =>
                  v.path("tags").elements().asScala.map(_.asText()).toSeq == Seq("fips")) => e.getKey
        }
      }.toSet
      assert(regions == EndpointVariants.FipsRegions.toSet, service)
    }
  }

  test("the SDK's endpoint rules choose the FIPS and dual-stack Kinesis hosts") {
    assert(EndpointVariants.kinesisHost("us-east-1", EndpointVariants.Sdk) == "kinesis.us-east-1.amazonaws.com")
    assert(EndpointVariants.kinesisHost("us-east-1", fips) == "kinesis-fips.us-east-1.amazonaws.com")
    assert(EndpointVariants.kinesisHost("eu-west-1", dualstack) == "kinesis.eu-west-1.api.aws")
    assert(EndpointVariants.kinesisHost("us-gov-west-1", EndpointVariants(Some(true), Some(true))) ==
      "kinesis-fips.us-gov-west-1.api.aws")
    assert(EndpointVariants.kinesisHost("cn-north-1", dualstack) == "kinesis.cn-north-1.api.amazonwebservices.com.cn")
    assert(EndpointVariants.problem(fips, "us-west-2").isEmpty)
    assert(EndpointVariants.problem(fips, "eu-central-1").exists(_.contains("region 'eu-central-1'")))
    assert(EndpointVariants.problem(EndpointVariants(Some(false), Some(true)), "eu-central-1").isEmpty)
    // FIPS on by the SDK's own setting only (AWS_USE_FIPS_ENDPOINT on the driver): refused as well, naming the setting
    // and the option that turns it off for the query; the option set to false wins over the setting.
    val unset = EndpointVariants(None, None)
    val bySdk = EndpointVariants.problem(unset, "eu-central-1", sdkFips = true)
    assert(bySdk.exists(p =>
        p.contains("AWS_USE_FIPS_ENDPOINT") && p.contains("'useFipsEndpoint' to false") &&
          p.contains("region 'eu-central-1'")), bySdk)
    assert(EndpointVariants.problem(unset, "us-gov-west-1", sdkFips = true).isEmpty)
    assert(EndpointVariants.problem(unset, "eu-central-1", sdkFips = false).isEmpty)
    assert(EndpointVariants.problem(EndpointVariants(Some(false), None), "eu-central-1", sdkFips = true).isEmpty)
  }

  test("the Glue host of the schema registry functions follows the variants too") {
    assert(EndpointVariants.host(Glue, "us-east-1", EndpointVariants(Some(false), Some(false))) ==
      "glue.us-east-1.amazonaws.com")
    assert(EndpointVariants.host(Glue, "us-east-1", fips) == "glue-fips.us-east-1.amazonaws.com")
    assert(EndpointVariants.host(Glue, "eu-west-1", EndpointVariants(Some(false), Some(true))) ==
      "glue.eu-west-1.api.aws")
    assert(EndpointVariants.host(Sts, "us-west-2", EndpointVariants(Some(true), Some(false))) ==
      "sts-fips.us-west-2.amazonaws.com")
  }

  test("errors name the variant's host, and a chain's roles in order") {
    val chain = CredentialsConfig.AssumeRole(
      CredentialsConfig.AssumeRole(CredentialsConfig.DefaultChain, "arn:aws:iam::111111111111:role/hub", None, "s",
        None), "arn:aws:iam::222222222222:role/owner", Some("secret-external-id"), "s", None)
    val contact = Contact.of(AwsConnection("us-east-1", None, chain, cborEnabled = true, fips))
    assert(contact.kinesisEndpoint == "https://kinesis-fips.us-east-1.amazonaws.com")
    assert(contact.stsEndpoint == "https://sts-fips.us-east-1.amazonaws.com")
    assert(contact.role.contains("arn:aws:iam::111111111111:role/hub, then arn:aws:iam::222222222222:role/owner"))
    val plain = Contact.of(AwsConnection("eu-west-1", None, CredentialsConfig.DefaultChain, cborEnabled = true,
        EndpointVariants(Some(false), Some(true))))
    assert(plain.kinesisEndpoint == "https://kinesis.eu-west-1.api.aws")
  }

  private val plain = EndpointVariants(Some(false), Some(false))

  test("every service the connector calls resolves in the China partition as the SDK says, not amazonaws.com") {
    assert(EndpointVariants.host(Kinesis, "cn-north-1", plain) == "kinesis.cn-north-1.amazonaws.com.cn")
    assert(EndpointVariants.host(Sts, "cn-north-1", plain) == "sts.cn-north-1.amazonaws.com.cn")
    assert(EndpointVariants.host(Glue, "cn-north-1", plain) == "glue.cn-north-1.amazonaws.com.cn")
    assert(EndpointVariants.host(CloudWatch, "cn-northwest-1", plain) == "monitoring.cn-northwest-1.amazonaws.com.cn")
    assert(EndpointVariants.host(Glue, "cn-north-1", EndpointVariants(Some(false), Some(true))) ==
      "glue.cn-north-1.api.amazonwebservices.com.cn")
    val contact = Contact.of(AwsConnection("cn-north-1", None, CredentialsConfig.DefaultChain, cborEnabled = true,
        plain))
    assert(contact.kinesisEndpoint == "https://kinesis.cn-north-1.amazonaws.com.cn")
  }

  test("FIPS resolves to every service's FIPS host") {
    val fipsOnly = EndpointVariants(Some(true), Some(false))
    assert(EndpointVariants.host(Kinesis, "us-east-2", fipsOnly) == "kinesis-fips.us-east-2.amazonaws.com")
    assert(EndpointVariants.host(Sts, "us-east-2", fipsOnly) == "sts-fips.us-east-2.amazonaws.com")
    assert(EndpointVariants.host(Glue, "us-gov-west-1", fipsOnly) == "glue-fips.us-gov-west-1.amazonaws.com")
    assert(EndpointVariants.host(CloudWatch, "us-west-2", fipsOnly) == "monitoring-fips.us-west-2.amazonaws.com")
  }

  test("where the SDK resolves no endpoint, the error names the region, the variant and the endpoint URL option") {
    for (service <- Seq(Kinesis, Sts, Glue, CloudWatch)) {
      val e = intercept[KinesisOptionException](EndpointVariants.host(service, "not a region", fips))
      assert(e.condition == "KINESIS_INVALID_OPTION_VALUE", e.getMessage)
      assert(e.getMessage.contains("Option 'region' has the value 'not a region'"), e.getMessage)
      assert(e.getMessage.contains(s"resolves a FIPS ${service.label} endpoint"), e.getMessage)
      assert(e.getMessage.contains("'useFipsEndpoint'"), e.getMessage)
      assert(e.getMessage.contains(s"set '${service.endpointOption.name}' to the endpoint's URL"), e.getMessage)
    }
    // When the query is defined: the schema registry functions' Glue, the source's Kinesis.
    val registry = intercept[KinesisOptionException](AwsConnection.forRegistry(
        ParsedOptions(Map("region" -> "not a region").asJava, Scope.Source)))
    assert(registry.getMessage.contains("'registryEndpointUrl'"), registry.getMessage)
    val source = intercept[KinesisOptionException](AwsConnection.fromOptions(
        ParsedOptions(Map("region" -> "not a region", "streamName" -> "orders").asJava, Scope.Source),
        Seq(StreamRef.parse("orders"))))
    assert(source.getMessage.contains("'endpointUrl'"), source.getMessage)
  }
}
