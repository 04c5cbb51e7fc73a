package io.sparkkinesis.aws

import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.compat.CollectionConverters._
import io.sparkkinesis.errors.KinesisOptionException
import io.sparkkinesis.source.SourceOptions

/** Issue 40, items 1 and 2: the credential and endpoint options as the query's definition reads and checks them. */
class CredentialOptionsSuite extends AnyFunSuite {
  import CredentialsConfig._

  private val hub = "arn:aws:iam::111111111111:role/hub"
  private val owner = "arn:aws:iam::222222222222:role/stream-owner"
  private val reader = "arn:aws-us-gov:iam::333333333333:role/path/reader,with-comma"
  private val base = Map("streamName" -> "orders", "region" -> "eu-west-1")

  private def connection(options: (String, String)*): AwsConnection =
    SourceOptions.parse((base ++ options).asJava).connection

  private def error(options: (String, String)*): KinesisOptionException =
    intercept[KinesisOptionException](connection(options: _*))

  test("one role takes roleExternalId and roleSessionName whole, commas and all, as before") {
    assert(connection("roleArn" -> hub, "roleExternalId" -> "ext,with,commas", "roleSessionName" -> "job").credentials ==
      AssumeRole(DefaultChain, hub, Some("ext,with,commas"), "job", None))
  }

  test("a role chain nests the roles in order, each with its own external id and session name") {
    val c = connection("roleArn" -> s"$hub, $owner,$reader", "roleExternalId" -> ",owner-id,reader-id",
      "roleSessionName" -> "a,,c", "stsEndpointUrl" -> "http://127.0.0.1:5000").credentials
    val sts = Some("http://127.0.0.1:5000")
    assert(c == AssumeRole(AssumeRole(AssumeRole(DefaultChain, hub, None, "a", sts), owner, Some("owner-id"),
        "spark-kinesis", sts), reader, Some("reader-id"), "c", sts))
    assert(roles(c) == Seq(hub, owner, reader))
  }

  test("one external id and session name apply to every role of a chain") {
    assert(connection("roleArn" -> s"$hub,$owner", "roleExternalId" -> "shared-id", "roleSessionName" -> "s")
      .credentials == AssumeRole(AssumeRole(DefaultChain, hub, Some("shared-id"), "s", None), owner, Some("shared-id"),
      "s", None))
  }

  test("a list whose length is not the chain's is refused, naming the option, without its values") {
    val e = error("roleArn" -> s"$hub,$owner,$reader", "roleExternalId" -> "first-secret-id,second-secret-id")
    assert(e.condition == "KINESIS_CONFLICTING_OPTIONS")
    assert(e.getMessage.contains("Option 'roleExternalId' has 2 values separated by commas but 'roleArn' names 3 " +
        "roles"), e.getMessage)
    assert(!e.getMessage.contains("secret-id"), e.getMessage)
    assert(error("roleArn" -> s"$hub,$owner", "roleSessionName" -> "a,b,c").getMessage.contains("'roleSessionName'"))
  }

  test("a malformed role ARN is refused, naming the option and the form expected") {
    for (arn <- Seq("hub", "arn:aws:iam::1234:role/hub", "arn:aws:iam::111111111111:user/alice",
        "arn:aws:iam::111111111111:role/", s"$hub,arn:aws:iam::222222222222:role/")) {
      val e = error("roleArn" -> arn)
      assert(e.condition == "KINESIS_INVALID_OPTION_VALUE", arn)
      assert(e.getMessage.contains("Option 'roleArn'") && e.getMessage.contains("arn:aws:iam::123456789012:role/"),
        e.getMessage)
    }
    assert(error("webIdentityTokenFile" -> "/t", "webIdentityRoleArn" -> "pods").getMessage
        .contains("Option 'webIdentityRoleArn'"))
  }

  test("two bases at once are refused, naming both and never a secret") {
    val e = error("webIdentityTokenFile" -> "/var/run/token", "webIdentityRoleArn" -> hub, "awsProfile" -> "p")
    assert(e.condition == "KINESIS_CONFLICTING_OPTIONS")
    assert(e.getMessage.contains("Options 'awsProfile' and 'webIdentityTokenFile' each choose the base credentials"),
      e.getMessage)
    val keys = error("containerCredentialsUri" -> "http://169.254.170.23/v1/credentials",
      "awsAccessKeyId" -> "AKIDSECRETKEYID", "awsSecretKey" -> "very-secret-key")
    assert(keys.getMessage.contains("'awsAccessKeyId' and 'containerCredentialsUri'"), keys.getMessage)
    assert(!keys.getMessage.contains("AKIDSECRETKEYID") && !keys.getMessage.contains("very-secret-key"))
  }

  test("a web identity base, alone or under a chain, and the options it needs") {
    val web = WebIdentity("/var/run/token", hub, "pods", Some("http://127.0.0.1:5000"))
    assert(connection("webIdentityTokenFile" -> "/var/run/token", "webIdentityRoleArn" -> hub,
      "webIdentityRoleSessionName" -> "pods", "stsEndpointUrl" -> "http://127.0.0.1:5000").credentials == web)
    assert(connection("webIdentityTokenFile" -> "/var/run/token", "webIdentityRoleArn" -> hub,
      "webIdentityRoleSessionName" -> "pods", "stsEndpointUrl" -> "http://127.0.0.1:5000", "roleArn" -> owner)
      .credentials == AssumeRole(web, owner, None, "spark-kinesis", Some("http://127.0.0.1:5000")))
    assert(error("webIdentityTokenFile" -> "/var/run/token").condition == "KINESIS_MISSING_OPTION")
    assert(error("webIdentityRoleArn" -> hub).getMessage
        .contains("Option 'webIdentityRoleArn' is only used with 'webIdentityTokenFile'"))
    assert(error("stsEndpointUrl" -> "http://127.0.0.1:5000").getMessage
        .contains("'stsEndpointUrl' is only used with 'roleArn' or 'webIdentityTokenFile'"))
  }

  test("container credentials take https anywhere, plain http only on loopback or the agents' addresses") {
    assert(connection("containerCredentialsUri" -> "http://169.254.170.23/v1/credentials",
      "containerAuthorizationTokenFile" -> "/var/run/pod-token").credentials ==
      Container("http://169.254.170.23/v1/credentials", Some("/var/run/pod-token")))
    for (ok <- Seq("http://127.0.0.1:8080/creds", "http://169.254.170.2/v2/credentials/x", "https://creds.example"))
      assert(connection("containerCredentialsUri" -> ok).credentials == Container(ok, None))
    for (bad <- Seq("http://creds.example/v1", "credentials", "ftp://127.0.0.1/x")) {
      val e = error("containerCredentialsUri" -> bad)
      assert(e.condition == "KINESIS_INVALID_OPTION_VALUE" && e.getMessage.contains("'containerCredentialsUri'"), bad)
    }
    assert(
      error("containerAuthorizationTokenFile" -> "/t").getMessage.contains("only used with 'containerCredentialsUri'"))
  }

  test("toString never shows keys, tokens, external ids or token files") {
    val shown = Seq(
      StaticKeys("AKIDKEY", "secret-key", Some("session-token")),
      AssumeRole(WebIdentity("/var/run/web-token", hub, "pods", None), owner, Some("external-id-value"), "s", None),
      Container("http://169.254.170.23/v1/credentials", Some("/var/run/pod-token"))).map(_.toString).mkString("\n")
    for (secret <- Seq("AKIDKEY", "secret-key", "session-token", "external-id-value", "web-token", "pod-token"))
      assert(!shown.contains(secret), shown)
    assert(shown.contains(owner) && shown.contains(hub), shown)
  }

  test("useFipsEndpoint where a service would use it must be in a region with FIPS endpoints") {
    val e = error("useFipsEndpoint" -> "true")
    assert(e.condition == "KINESIS_CONFLICTING_OPTIONS")
    assert(e.getMessage.contains("Option 'useFipsEndpoint' is true but Kinesis and STS have no FIPS endpoints in " +
        "region 'eu-west-1'"), e.getMessage)
    assert(connection("useFipsEndpoint" -> "true", "region" -> "us-gov-west-1").endpoints ==
      EndpointVariants(Some(true), None))
    // Kinesis at an explicit URL and no STS: the flag chooses nothing, so nothing to refuse.
    assert(connection("useFipsEndpoint" -> "true", "endpointUrl" -> "http://127.0.0.1:4567").endpoints.fips
        .contains(true))
    // ... but STS without its own URL would call the region's FIPS host, which does not exist.
    assert(error("useFipsEndpoint" -> "true", "endpointUrl" -> "http://127.0.0.1:4567", "roleArn" -> hub)
      .condition == "KINESIS_CONFLICTING_OPTIONS")
    assert(connection("useDualstackEndpoint" -> "true").endpoints == EndpointVariants(None, Some(true)))
    assert(error("useFipsEndpoint" -> "yes").getMessage.contains("'useFipsEndpoint'"))
  }
}
