package io.sparkkinesis.aws

import io.sparkkinesis.config.{KinesisOptions, ParsedOptions}
import io.sparkkinesis.errors.KinesisErrors
import software.amazon.awssdk.regions.providers.DefaultAwsRegionProviderChain

import scala.util.Try

/** How credentials are obtained. `toString` never shows secret values. */
private[sparkkinesis] sealed trait CredentialsConfig extends Serializable
private[sparkkinesis] object CredentialsConfig {
  case object DefaultChain extends CredentialsConfig
  final case class Profile(name: String) extends CredentialsConfig

  /** STS AssumeRole, signed with `base`. */
  final case class AssumeRole(
      base: CredentialsConfig,
      roleArn: String,
      externalId: Option[String],
      sessionName: String,
      stsEndpointUrl: Option[String]) extends CredentialsConfig {
    override def toString: String =
      s"AssumeRole(base=$base, roleArn=$roleArn, externalId=${externalId.map(_ => "<redacted>").getOrElse("(none)")}, " +
        s"sessionName=$sessionName, stsEndpoint=${stsEndpointUrl.getOrElse("(default)")})"
  }
  final case class StaticKeys(accessKeyId: String, secretKey: String, sessionToken: Option[String])
    extends CredentialsConfig {
    override def toString: String = "StaticKeys(<redacted>)"
  }
}

/** Everything needed to build a Kinesis client on the driver or an executor; resolved once on the driver. */
private[sparkkinesis] final case class AwsConnection(
    region: String,
    endpointUrl: Option[String],
    credentials: CredentialsConfig,
    cborEnabled: Boolean) {
  override def toString: String =
    s"AwsConnection(region=$region, endpoint=${endpointUrl.getOrElse("(default)")}, credentials=$credentials)"
}

private[sparkkinesis] object AwsConnection {

  def fromOptions(opts: ParsedOptions, streams: Seq[StreamRef]): AwsConnection = {
    val endpoint = opts.get(KinesisOptions.EndpointUrl)
    endpoint.foreach(validateUrl(KinesisOptions.EndpointUrl.name, _))
    AwsConnection(resolveRegion(opts, streams, endpoint.isDefined), endpoint, credentials(opts),
      opts.getOrDefault(KinesisOptions.CborEnabled))
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
    AwsConnection(resolveRegion(opts, Nil, endpoint.isDefined), endpoint, credentials(opts), cborEnabled = false)
  }

  private def credentials(opts: ParsedOptions): CredentialsConfig = {
    val base = baseCredentials(opts)
    opts.get(KinesisOptions.RoleArn) match {
      case Some(arn) =>
        if (!arn.startsWith("arn:"))
          throw KinesisErrors.invalidOptionValue(KinesisOptions.RoleArn.name, arn,
            "an IAM role ARN such as arn:aws:iam::123456789012:role/kinesis-reader")
        opts.get(KinesisOptions.StsEndpointUrl).foreach(validateUrl(KinesisOptions.StsEndpointUrl.name, _))
        CredentialsConfig.AssumeRole(base, arn, opts.get(KinesisOptions.RoleExternalId),
          opts.getOrDefault(KinesisOptions.RoleSessionName), opts.get(KinesisOptions.StsEndpointUrl))
      case None =>
        Seq(KinesisOptions.RoleExternalId, KinesisOptions.StsEndpointUrl).find(opts.contains).foreach { o =>
          throw KinesisErrors.conflictingOptions(
            s"Option '${o.name}' is only used with 'roleArn'; set 'roleArn' or remove it.")
        }
        base
    }
  }

  private def baseCredentials(opts: ParsedOptions): CredentialsConfig = {
    val profile = opts.get(KinesisOptions.AwsProfile)
    if (profile.isDefined && opts.contains(KinesisOptions.AwsAccessKeyId))
      throw KinesisErrors.conflictingOptions(
        "Options 'awsProfile' and 'awsAccessKeyId' both choose credentials; keep one.")
    val keyId = opts.get(KinesisOptions.AwsAccessKeyId)
    val secret = opts.get(KinesisOptions.AwsSecretKey)
    (keyId, secret) match {
      case (Some(k), Some(s)) => CredentialsConfig.StaticKeys(k, s, opts.get(KinesisOptions.AwsSessionToken))
      case (None, None) =>
        if (opts.contains(KinesisOptions.AwsSessionToken))
          throw KinesisErrors.conflictingOptions("Option 'awsSessionToken' needs 'awsAccessKeyId' and 'awsSecretKey'.")
        profile.map(CredentialsConfig.Profile).getOrElse(CredentialsConfig.DefaultChain)
      case (Some(_), None) => throw KinesisErrors.conflictingOptions(
          "Option 'awsAccessKeyId' is set but 'awsSecretKey' is not: give both, or neither to use the default credential chain.")
      case (None, Some(_)) => throw KinesisErrors.conflictingOptions(
          "Option 'awsSecretKey' is set but 'awsAccessKeyId' is not: give both, or neither to use the default credential chain.")
    }
  }

  private def validateUrl(option: String, url: String): Unit =
    if (Try(java.net.URI.create(url)).toOption.forall(u => u.getScheme == null || u.getHost == null))
      throw KinesisErrors.invalidOptionValue(option, url,
        "an absolute URL such as https://kinesis.eu-west-1.amazonaws.com or http://127.0.0.1:4566")

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
