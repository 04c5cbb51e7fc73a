package io.sparkkinesis.aws

/**
 * How credentials are obtained: a base (the default chain, a profile, static keys, a web identity token file, a
 * container credentials endpoint) and any number of roles assumed on top of it, in order, each an [[AssumeRole]]
 * around the one before. `toString` never shows a credential value (keys, tokens, external ids, token files).
 */
private[sparkkinesis] sealed trait CredentialsConfig extends Serializable
private[sparkkinesis] object CredentialsConfig {
  case object DefaultChain extends CredentialsConfig
  final case class Profile(name: String) extends CredentialsConfig

  final case class StaticKeys(accessKeyId: String, secretKey: String, sessionToken: Option[String])
    extends CredentialsConfig {
    override def toString: String = "StaticKeys(<redacted>)"
  }

  /**
   * STS AssumeRoleWithWebIdentity with the token in `tokenFile`, read again at every refresh (Kubernetes rotates it):
   * IAM roles for service accounts (IRSA) and any OIDC provider that writes a token file.
   */
  final case class WebIdentity(tokenFile: String, roleArn: String, sessionName: String, stsEndpointUrl: Option[String])
    extends CredentialsConfig {
    override def toString: String =
      s"WebIdentity(tokenFile=<redacted>, roleArn=$roleArn, sessionName=$sessionName, " +
        s"stsEndpoint=${stsEndpointUrl.getOrElse("(default)")})"
  }

  /**
   * The container credentials endpoint (ECS task roles, EKS Pod Identity) at `uri`, with the authorization token
   * read from `authorizationTokenFile` at every refresh when given.
   */
  final case class Container(uri: String, authorizationTokenFile: Option[String]) extends CredentialsConfig {
    override def toString: String =
      s"Container(uri=$uri, authorizationTokenFile=${authorizationTokenFile.fold("(none)")(_ => "<redacted>")})"
  }

  /** STS AssumeRole, signed with `base`; a role chain nests these, the last role outermost. */
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

  /** The roles a configuration assumes, first to last (the web identity role first when that is the base). */
  def roles(c: CredentialsConfig): Seq[String] = c match {
    case r: AssumeRole => roles(r.base) :+ r.roleArn
    case w: WebIdentity => Seq(w.roleArn)
    case _ => Nil
  }

  /** The STS endpoint URL the configuration's STS calls go to, when one is set. */
  def stsEndpointUrl(c: CredentialsConfig): Option[String] = c match {
    case r: AssumeRole => r.stsEndpointUrl
    case w: WebIdentity => w.stsEndpointUrl
    case _ => None
  }
}
