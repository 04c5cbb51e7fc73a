package io.sparkkinesis.aws

import io.sparkkinesis.config.{KinesisOptions, ParsedOptions}
import io.sparkkinesis.errors.KinesisErrors
import software.amazon.awssdk.regions.providers.DefaultAwsRegionProviderChain

import scala.util.Try

/** Everything needed to build a Kinesis client on the driver or an executor; resolved once on the driver. */
private[sparkkinesis] final case class AwsConnection(
    region: String,
    endpointUrl: Option[String],
    credentials: CredentialsConfig,
    cborEnabled: Boolean,
    endpoints: EndpointVariants = EndpointVariants.Sdk) {
  override def toString: String =
    s"AwsConnection(region=$region, endpoint=${endpointUrl.getOrElse("(default)")}, $endpoints, " +
      s"credentials=$credentials)"
}

private[sparkkinesis] object AwsConnection {

  def fromOptions(opts: ParsedOptions, streams: Seq[StreamRef]): AwsConnection = {
    val endpoint = opts.get(KinesisOptions.EndpointUrl)
    endpoint.foreach(validateUrl(KinesisOptions.EndpointUrl.name, _))
    val c = connection(opts, resolveRegion(opts, streams, endpoint.isDefined), endpoint,
      opts.getOrDefault(KinesisOptions.CborEnabled))
    if (endpoint.isEmpty) EndpointVariants.host(EndpointVariants.Service.Kinesis, c.region, c.endpoints)
    c
  }

  /**
   * The connection of the schema registry functions: the region and credentials as a read takes them, and the Glue
   * endpoint `registryEndpointUrl` as its endpoint (`endpointUrl` is Kinesis's, so it is refused here).
   */
  def forRegistry(opts: ParsedOptions): AwsConnection = {
    Seq(KinesisOptions.EndpointUrl, KinesisOptions.StreamName, KinesisOptions.CborEnabled).find(opts.contains)
      .foreach { o =>
        throw KinesisErrors.optionNotForScope(o.name,
          "source and sink (for the Glue endpoint, use " +
            s"'${KinesisOptions.RegistryEndpointUrl.name}')", opts.scope.label)
      }
    val endpoint = opts.get(KinesisOptions.RegistryEndpointUrl)
    endpoint.foreach(validateUrl(KinesisOptions.RegistryEndpointUrl.name, _))
    val c = connection(opts, resolveRegion(opts, Nil, endpoint.isDefined), endpoint, cborEnabled = false)
    if (endpoint.isEmpty) EndpointVariants.host(EndpointVariants.Service.Glue, c.region, c.endpoints)
    c
  }

  /**
   * The connection of `region` and `endpoint` (the service's own URL, if any) with the credentials and endpoint
   * variants of `opts`, checked: a FIPS or dual-stack variant a service would use must exist in the region.
   */
  private def connection(
      opts: ParsedOptions,
      region: String,
      endpoint: Option[String],
      cborEnabled: Boolean): AwsConnection = {
    val credentials = CredentialOptions.parse(opts)
    val variants =
      EndpointVariants(opts.get(KinesisOptions.UseFipsEndpoint), opts.get(KinesisOptions.UseDualstackEndpoint))
    // Where every service the query calls has its own endpoint URL, the variants choose nothing.
    val stsUsesVariants =
      CredentialsConfig.roles(credentials).nonEmpty && CredentialsConfig.stsEndpointUrl(credentials).isEmpty
    if (endpoint.isEmpty || stsUsesVariants)
      EndpointVariants.problem(variants, region).foreach(p => throw KinesisErrors.conflictingOptions(p))
    // Where the SDK resolves no endpoint for the region (a malformed one, a variant its partition lacks), the error
    // names the options now rather than at the first call (Kinesis's and Glue's by the callers).
    if (stsUsesVariants) EndpointVariants.host(EndpointVariants.Service.Sts, region, variants)
    AwsConnection(region, endpoint, credentials, cborEnabled, variants)
  }

  /** Refuses `url` of `option` unless it is an absolute URL; the error shows `examples` of one. */
  private[sparkkinesis] def validateUrl(
      option: String,
      url: String,
      examples: String = "https://kinesis.eu-west-1.amazonaws.com or http://127.0.0.1:4566"): Unit =
    if (Try(java.net.URI.create(url)).toOption.forall(u => u.getScheme == null || u.getHost == null))
      throw KinesisErrors.invalidOptionValue(option, url, s"an absolute URL such as $examples")

  private def resolveRegion(opts: ParsedOptions, streams: Seq[StreamRef], hasEndpoint: Boolean): String = {
    val fromArns = streams.flatMap(_.arnRegion).distinct
    opts.get(KinesisOptions.Region) match {
      case Some(r) =>
        fromArns.find(_ != r).foreach { other =>
          throw KinesisErrors.conflictingOptions(
            s"Option 'region' is '$r' but a stream ARN in 'streamName' is in '$other'; remove 'region' or fix the ARN.")
        }
        r
      case None if fromArns.size > 1 =>
        throw KinesisErrors.conflictingOptions(
          s"The stream ARNs in 'streamName' are in several regions (${fromArns.mkString(", ")}); one query reads one region.")
      case None if fromArns.size == 1 => fromArns.head
      case None if hasEndpoint =>
        // A local endpoint: only look at the cheap sources (never the EC2 metadata service).
        sys.env.get("AWS_REGION").orElse(sys.props.get("aws.region")).getOrElse("us-east-1")
      case None =>
        Try(new DefaultAwsRegionProviderChain().getRegion.id()).getOrElse(
          throw KinesisErrors.missingOption(KinesisOptions.Region.name, "us-east-1"))
    }
  }
}
