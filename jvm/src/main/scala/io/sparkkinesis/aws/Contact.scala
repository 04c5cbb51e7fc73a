package io.sparkkinesis.aws

import java.util.concurrent.ConcurrentHashMap

import software.amazon.awssdk.services.sts.StsClient

import scala.util.Try

/**
 * Where the calls of a connection go: the region, the Kinesis endpoint (or its FIPS or dual-stack variant) and,
 * with roles to assume, STS. Nothing secret,
 * so it can name the endpoint in errors and key what this JVM knows about reaching it ([[Contact.answered]]).
 */
private[sparkkinesis] final case class Contact(
    region: String,
    endpointUrl: Option[String],
    role: Option[String],
    stsEndpointUrl: Option[String],
    endpoints: EndpointVariants = EndpointVariants.Sdk) {

  /**
   * The Kinesis endpoint the SDK calls: `endpointUrl`, else its environment variables, else the region's (its FIPS
   * or dual-stack variant when the options or the SDK's own settings choose one).
   */
  def kinesisEndpoint: String =
    endpointUrl.orElse(Contact.env("AWS_ENDPOINT_URL_KINESIS")).orElse(Contact.env("AWS_ENDPOINT_URL"))
      .getOrElse(regional(EndpointVariants.Service.Kinesis))

  /** The STS endpoint AssumeRole calls go to. */
  def stsEndpoint: String =
    stsEndpointUrl.orElse(Contact.env("AWS_ENDPOINT_URL_STS")).orElse(Contact.env("AWS_ENDPOINT_URL"))
      .getOrElse(regional(EndpointVariants.Service.Sts))

  /** The region's endpoint of `service` as the SDK resolves it, for an error: never a guessed host. */
  private def regional(service: EndpointVariants.Service): String =
    Try(s"https://${EndpointVariants.host(service, region, endpoints)}")
      .getOrElse(s"(none: the AWS SDK resolves no ${service.label} endpoint for region '$region')")

  /** What could not be reached, for an error: the STS endpoint when `cause` came from the STS client. */
  def describe(cause: Throwable): String = role match {
    case Some(arn) if Contact.fromSts(cause) =>
      s"the STS endpoint $stsEndpoint (region '$region'), to assume role $arn"
    case _ => s"the Kinesis endpoint $kinesisEndpoint (region '$region')"
  }
}

private[sparkkinesis] object Contact {

  /** Contacts whose endpoints have answered at least once in this JVM (a handful per application). */
  private val reached = ConcurrentHashMap.newKeySet[Contact]()
  private val MaxRemembered = 1000

  /** The contact of `c`; with a role chain, its role names the chain's roles in order ("a, then b"). */
  def of(c: AwsConnection): Contact = {
    val roles = CredentialsConfig.roles(c.credentials)
    Contact(c.region, c.endpointUrl, if (roles.isEmpty) None else Some(roles.mkString(", then ")),
      CredentialsConfig.stsEndpointUrl(c.credentials), c.endpoints)
  }

  /** Records that the service answered a call of `c` (a result or an error of the service's own). */
  def answered(c: Contact): Unit =
    if (!reached.contains(c)) {
      if (reached.size >= MaxRemembered) reached.clear()
      reached.add(c)
    }

  /** Whether a call of `c` has been answered in this JVM. */
  def hasAnswered(c: Contact): Boolean = reached.contains(c)

  /** Forgets what this JVM knows (tests). */
  private[sparkkinesis] def forget(c: Contact): Unit = reached.remove(c)

  private def env(name: String): Option[String] = Option(System.getenv(name)).map(_.trim).filter(_.nonEmpty)

  private val StsPackage = classOf[StsClient].getPackageName + "."

  /** Whether `t` (or a cause) was thrown inside the STS client, i.e. while fetching credentials with AssumeRole. */
  def fromSts(t: Throwable): Boolean =
    Iterator.iterate(t)(_.getCause).takeWhile(_ != null).take(10)
      .exists(_.getStackTrace.exists(_.getClassName.startsWith(StsPackage)))
}
