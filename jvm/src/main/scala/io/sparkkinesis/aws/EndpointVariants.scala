package io.sparkkinesis.aws

import scala.util.Try
import scala.util.control.NonFatal

import software.amazon.awssdk.awscore.client.builder.AwsClientBuilder
import software.amazon.awssdk.awscore.endpoint.{DualstackEnabledProvider, FipsEnabledProvider}
import software.amazon.awssdk.regions.{EndpointTag, Region, ServiceEndpointKey, ServiceMetadata}
import software.amazon.awssdk.services.kinesis.endpoints.{KinesisEndpointParams, KinesisEndpointProvider}

/**
 * Which of a region's endpoint variants the clients call: FIPS (`useFipsEndpoint`) and dual-stack, IPv4 and IPv6
 * (`useDualstackEndpoint`). None leaves the choice to the SDK, which reads `AWS_USE_FIPS_ENDPOINT` and
 * `AWS_USE_DUALSTACK_ENDPOINT`, the system properties `aws.useFipsEndpoint` and `aws.useDualstackEndpoint`, and the
 * profile keys `use_fips_endpoint` and `use_dualstack_endpoint`, in that order.
 *
 * An explicit endpoint URL wins for its own service (`endpointUrl` for Kinesis, `stsEndpointUrl` for STS,
 * `registryEndpointUrl` for Glue): a client built with one calls exactly that URL, whatever the flags and the SDK's
 * settings say, and the flags choose the endpoints of the services that have none.
 */
private[sparkkinesis] final case class EndpointVariants(fips: Option[Boolean], dualstack: Option[Boolean]) {

  /** Sets the variants on a client builder; with an explicit endpoint URL, turns them off (the URL is the endpoint). */
  def applyTo[B <: AwsClientBuilder[B, _]](builder: B, endpointUrl: Option[String]): B =
    endpointUrl match {
      case Some(url) =>
        builder.endpointOverride(java.net.URI.create(url)).fipsEnabled(false).dualstackEnabled(false)
      case None =>
        fips.foreach(f => builder.fipsEnabled(java.lang.Boolean.valueOf(f)))
        dualstack.foreach(d => builder.dualstackEnabled(java.lang.Boolean.valueOf(d)))
        builder
    }

  override def toString: String =
    s"EndpointVariants(fips=${fips.fold("(sdk)")(_.toString)}, dualstack=${dualstack.fold("(sdk)")(_.toString)})"
}

private[sparkkinesis] object EndpointVariants {

  /** The SDK's own settings decide. */
  val Sdk: EndpointVariants = EndpointVariants(None, None)

  /**
   * The regions where Kinesis, STS and Glue have FIPS endpoints, as the SDK's endpoint metadata lists them
   * (`EndpointVariantsSuite` checks this list against the metadata of the SDK the connector is built with). The
   * SDK's endpoint rules would build a `kinesis-fips.<region>` host name for any region of a partition that has FIPS
   * endpoints at all, even where no such host exists, so the connector checks the region itself.
   */
  val FipsRegions: Seq[String] =
    Seq("us-east-1", "us-east-2", "us-west-1", "us-west-2", "us-gov-east-1", "us-gov-west-1")

  /**
   * Why `variants` cannot be used in `region`, if they cannot: a sentence naming the option and what to do. Only FIPS
   * is checked: the SDK's endpoint rules give every region of every partition a dual-stack host, and neither its
   * metadata nor anything else the connector can read offline says which of them answer (a dual-stack host that does
   * not exist fails at the first call with [KINESIS_ENDPOINT_UNREACHABLE], naming it).
   */
  def problem(variants: EndpointVariants, region: String): Option[String] =
    problem(variants, region, sdkFips)

  /**
   * The same, with `sdkFips` the SDK's own FIPS setting on this JVM (the driver), which decides where the option is
   * unset: checked here too, so that a region without FIPS endpoints fails when the query is defined, not at its
   * first call.
   */
  private[aws] def problem(variants: EndpointVariants, region: String, sdkFips: => Boolean): Option[String] =
    if (FipsRegions.contains(region)) None
    else {
      val others =
        s"Kinesis and STS have no FIPS endpoints in region '$region' (they have in ${FipsRegions.mkString(", ")})"
      variants.fips match {
        case Some(true) =>
          Some(s"Option 'useFipsEndpoint' is true but $others; use a stream in one of those regions, or remove " +
            "'useFipsEndpoint'.")
        case None if sdkFips =>
          Some("The AWS SDK's own setting turns FIPS endpoints on (the AWS_USE_FIPS_ENDPOINT environment variable, " +
            s"the aws.useFipsEndpoint system property or the profile's use_fips_endpoint) but $others; set option " +
            "'useFipsEndpoint' to false for this query, or use a stream in one of those regions.")
        case _ => None
      }
    }

  /** The Kinesis host the SDK's endpoint rules choose for `region` with `variants` (false where unset). */
  def kinesisHost(region: String, variants: EndpointVariants): String = {
    val params = KinesisEndpointParams.builder().region(Region.of(region))
      .useFips(java.lang.Boolean.valueOf(variants.fips.contains(true)))
      .useDualStack(java.lang.Boolean.valueOf(variants.dualstack.contains(true))).build()
    KinesisEndpointProvider.defaultProvider().resolveEndpoint(params).join().endpointUrl().host()
  }

  /**
   * The host of `service` (`glue`) for `region` with `variants`, from the SDK's endpoint metadata, for a client that
   * builds its requests itself ([[GlueRegistryClient]]); the SDK's settings decide where `variants` do not.
   */
  def host(service: String, region: String, variants: EndpointVariants): String = {
    val chosen = effective(variants)
    val tags = Seq(EndpointTag.FIPS).filter(_ => chosen.fips.contains(true)) ++
      Seq(EndpointTag.DUALSTACK).filter(_ => chosen.dualstack.contains(true))
    try {
      val key = ServiceEndpointKey.builder().region(Region.of(region)).tags(tags: _*).build()
      ServiceMetadata.of(service).endpointFor(key).toString
    } catch { case NonFatal(_) => s"$service.$region.amazonaws.com" }
  }

  /** `variants` with what is unset taken from the SDK's own settings (false where those say nothing either). */
  def effective(variants: EndpointVariants): EndpointVariants =
    EndpointVariants(
      Some(variants.fips.getOrElse(sdkFips)),
      Some(variants.dualstack.getOrElse(sdkSetting(DualstackEnabledProvider.builder().build().isDualstackEnabled))))

  /** The SDK's own FIPS setting on this JVM. */
  private def sdkFips: Boolean = sdkSetting(FipsEnabledProvider.builder().build().isFipsEnabled)

  /** The SDK's own setting (system property, environment variable, profile key), false where none is set. */
  private def sdkSetting(read: => java.util.Optional[java.lang.Boolean]): Boolean =
    Try(read.orElse(java.lang.Boolean.FALSE).booleanValue()).getOrElse(false)
}
