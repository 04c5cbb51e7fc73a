package io.sparkkinesis.aws

import java.util.concurrent.CompletionException

import scala.util.Try
import scala.util.control.NonFatal

import software.amazon.awssdk.awscore.client.builder.AwsClientBuilder
import software.amazon.awssdk.awscore.endpoint.{DualstackEnabledProvider, FipsEnabledProvider}
import software.amazon.awssdk.regions.{EndpointTag, Region, ServiceEndpointKey, ServiceMetadata}
import software.amazon.awssdk.services.cloudwatch.endpoints.{CloudWatchEndpointParams, CloudWatchEndpointProvider}
import software.amazon.awssdk.services.kinesis.endpoints.{KinesisEndpointParams, KinesisEndpointProvider}
import software.amazon.awssdk.services.sts.endpoints.{StsEndpointParams, StsEndpointProvider}

import io.sparkkinesis.config.{KinesisOptions, OptionSpec}
import io.sparkkinesis.errors.KinesisErrors

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

  /** A service the connector calls: its endpoint prefix, its name in errors and the option of its endpoint URL. */
  sealed abstract class Service(val prefix: String, val label: String, val endpointOption: OptionSpec[String])
  object Service {
    case object Kinesis extends Service("kinesis", "Kinesis", KinesisOptions.EndpointUrl)
    case object Sts extends Service("sts", "STS", KinesisOptions.StsEndpointUrl)
    case object Glue extends Service("glue", "Glue", KinesisOptions.RegistryEndpointUrl)
    case object CloudWatch extends Service("monitoring", "CloudWatch", KinesisOptions.CloudWatchEndpointUrl)
  }

  /** The Kinesis host the SDK's endpoint rules choose for `region` with `variants` (false where unset). */
  def kinesisHost(region: String, variants: EndpointVariants): String = resolve(Service.Kinesis, region, variants)

  /**
   * The host of `service` for `region` with `variants`, as the SDK resolves it, the SDK's own settings deciding where
   * `variants` do not: for a client that builds its requests itself ([[GlueRegistryClient]]) and for errors
   * ([[Contact]]). Where the SDK resolves none (a malformed region, a variant the region's partition lacks), a
   * [KINESIS_INVALID_OPTION_VALUE] names `region`, the variants and the service's endpoint URL option: never a guessed
   * host, which would be the wrong partition's or silently not FIPS.
   */
  def host(service: Service, region: String, variants: EndpointVariants): String = {
    val chosen = effective(variants)
    try resolve(service, region, chosen)
    catch {
      case NonFatal(e) =>
        val cause = e match {
          case c: CompletionException if c.getCause != null => c.getCause
          case other => other
        }
        throw KinesisErrors.endpointUnresolved(service.label, region, chosen.fips.contains(true),
          chosen.dualstack.contains(true), service.endpointOption.name, KinesisErrors.safeMessage(cause))
    }
  }

  /**
   * The SDK's resolution of `service`'s host (false where `variants` are unset): each service's endpoint rules
   * (its `EndpointProvider`) for the services whose SDK module the connector bundles; for Glue, whose module it does
   * not, the regions module's endpoint metadata, after the Kinesis rules have checked the region and the variants
   * (the same partition rules every service's endpoint rules apply).
   */
  private def resolve(service: Service, region: String, variants: EndpointVariants): String = {
    val host = resolved(service, region, variants)
    // The endpoint rules build a host of any region text (`kinesis.not%20a%20region.amazonaws.com`): one that is no
    // host name counts as none.
    if (!HostName.matcher(host).matches())
      throw new IllegalArgumentException(s"'$host' is not a host name")
    host
  }

  private val HostName = java.util.regex.Pattern.compile(
    "[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*")

  private def resolved(service: Service, region: String, variants: EndpointVariants): String = {
    val r = Region.of(region)
    val fips = java.lang.Boolean.valueOf(variants.fips.contains(true))
    val dualstack = java.lang.Boolean.valueOf(variants.dualstack.contains(true))
    service match {
      case Service.Kinesis =>
        KinesisEndpointProvider.defaultProvider()
          .resolveEndpoint(KinesisEndpointParams.builder().region(r).useFips(fips).useDualStack(dualstack).build())
          .join().endpointUrl().host()
      case Service.Sts =>
        StsEndpointProvider.defaultProvider()
          .resolveEndpoint(StsEndpointParams.builder().region(r).useFips(fips).useDualStack(dualstack).build())
          .join().endpointUrl().host()
      case Service.CloudWatch =>
        CloudWatchEndpointProvider.defaultProvider()
          .resolveEndpoint(CloudWatchEndpointParams.builder().region(r).useFips(fips).useDualStack(dualstack).build())
          .join().endpointUrl().host()
      case Service.Glue =>
        resolve(Service.Kinesis, region, variants)
        val tags = Seq(EndpointTag.FIPS).filter(_ => fips) ++ Seq(EndpointTag.DUALSTACK).filter(_ => dualstack)
        ServiceMetadata.of(service.prefix).endpointFor(ServiceEndpointKey.builder().region(r).tags(tags: _*).build())
          .toString
    }
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
