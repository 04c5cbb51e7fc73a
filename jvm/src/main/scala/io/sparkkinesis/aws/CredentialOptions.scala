package io.sparkkinesis.aws

import java.util.regex.Pattern

import io.sparkkinesis.config.{KinesisOptions, OptionSpec, ParsedOptions}
import io.sparkkinesis.errors.KinesisErrors

/**
 * Reads the credential options into a [[CredentialsConfig]]: at most one base (static keys, `awsProfile`,
 * `webIdentityTokenFile`, `containerCredentialsUri`; else the default chain), and the roles of `roleArn` on top of
 * it, in order. Everything is checked when the query is defined; errors name the option and never show a secret.
 */
private[aws] object CredentialOptions {
  import KinesisOptions._

  /**
   * An IAM role ARN in any partition: account id of 12 digits, a role name after an optional path. `roleArn`
   * splits its list only at commas followed by `arn:`, so a role name with a comma (IAM allows it) stays whole.
   */
  private val RoleArnPattern = Pattern.compile("arn:aws[a-z-]*:iam::\\d{12}:role/[\\x21-\\x7e]+")
  private val ArnListSeparator = "\\s*,\\s*(?=arn:)"
  private val ArnExample = "an IAM role ARN such as arn:aws:iam::123456789012:role/kinesis-reader"

  def parse(opts: ParsedOptions): CredentialsConfig = {
    val sts = opts.get(StsEndpointUrl)
    sts.foreach(AwsConnection.validateUrl(StsEndpointUrl.name, _))
    val base = baseCredentials(opts, sts)
    val arns = opts.get(RoleArn).map(roleArns)
    arns match {
      case Some(roles) =>
        val externalIds = perRole(opts, RoleExternalId, roles.size).map(_.filter(_.nonEmpty))
        val sessions = perRole(opts, RoleSessionName, roles.size)
          .map(_.filter(_.nonEmpty).getOrElse(RoleSessionName.default.get))
        roles.indices.foldLeft(base) { (signer, i) =>
          CredentialsConfig.AssumeRole(signer, roles(i), externalIds(i), sessions(i), sts)
        }
      case None =>
        Seq(RoleExternalId).find(opts.contains).foreach { o =>
          throw KinesisErrors.conflictingOptions(
            s"Option '${o.name}' is only used with 'roleArn'; set 'roleArn' or remove it.")
        }
        if (opts.contains(StsEndpointUrl) && !base.isInstanceOf[CredentialsConfig.WebIdentity])
          throw KinesisErrors.conflictingOptions(
            s"Option '${StsEndpointUrl.name}' is only used with 'roleArn' or 'webIdentityTokenFile'; set one of " +
              "them or remove it.")
        base
    }
  }

  /** The ARNs of `roleArn`, first to last, each checked. */
  private def roleArns(value: String): Seq[String] = {
    val arns = value.trim.split(ArnListSeparator).toSeq
    arns.foreach { arn =>
      if (!RoleArnPattern.matcher(arn).matches())
        throw KinesisErrors.invalidOptionValue(RoleArn.name, arn,
          s"$ArnExample, or several separated by commas for a role chain")
    }
    arns
  }

  /** One value of `spec` per role: a single role takes the value whole, a chain one value for all or one each. */
  private def perRole(opts: ParsedOptions, spec: OptionSpec[String], roles: Int): Seq[Option[String]] =
    opts.get(spec) match {
      case None => Seq.fill(roles)(None)
      case Some(v) if roles == 1 => Seq(Some(v.trim))
      case Some(v) =>
        val values = v.split(",", -1).map(_.trim).toSeq
        if (values.size == 1) Seq.fill(roles)(Some(values.head))
        else if (values.size == roles) values.map(Some(_))
        else
          throw KinesisErrors.conflictingOptions(
            s"Option '${spec.name}' has ${values.size} values separated by commas but 'roleArn' names $roles roles; " +
              s"give one value for every role, or exactly one per role in the order of 'roleArn' (empty for none).")
    }

  private def baseCredentials(opts: ParsedOptions, sts: Option[String]): CredentialsConfig = {
    val bases = Seq(AwsAccessKeyId, AwsProfile, WebIdentityTokenFile, ContainerCredentialsUri).filter(opts.contains)
    if (bases.size > 1)
      throw KinesisErrors.conflictingOptions(
        s"Options ${bases.map(b => s"'${b.name}'").mkString(" and ")} each choose the base credentials; keep one " +
          "(put roles to assume on top of it in 'roleArn').")
    Seq(WebIdentityRoleArn -> WebIdentityTokenFile, WebIdentityRoleSessionName -> WebIdentityTokenFile,
      ContainerAuthorizationTokenFile -> ContainerCredentialsUri).foreach { case (o, needs) =>
      if (opts.contains(o) && !opts.contains(needs))
        throw KinesisErrors.conflictingOptions(
          s"Option '${o.name}' is only used with '${needs.name}'; set '${needs.name}' or remove it.")
    }
    (opts.get(WebIdentityTokenFile), opts.get(ContainerCredentialsUri)) match {
      case (Some(file), _) =>
        val role = opts.get(WebIdentityRoleArn).getOrElse(
          throw KinesisErrors.missingOption(WebIdentityRoleArn.name, "arn:aws:iam::123456789012:role/spark-pods"))
        if (!RoleArnPattern.matcher(role).matches())
          throw KinesisErrors.invalidOptionValue(WebIdentityRoleArn.name, role, ArnExample)
        CredentialsConfig.WebIdentity(file, role, opts.getOrDefault(WebIdentityRoleSessionName), sts)
      case (None, Some(uri)) =>
        ContainerCredentials.problem(uri).foreach { expected =>
          throw KinesisErrors.invalidOptionValue(ContainerCredentialsUri.name, uri, expected)
        }
        CredentialsConfig.Container(uri, opts.get(ContainerAuthorizationTokenFile))
      case (None, None) => staticOrProfile(opts)
    }
  }

  private def staticOrProfile(opts: ParsedOptions): CredentialsConfig = {
    val keyId = opts.get(AwsAccessKeyId)
    val secret = opts.get(AwsSecretKey)
    (keyId, secret) match {
      case (Some(k), Some(s)) => CredentialsConfig.StaticKeys(k, s, opts.get(AwsSessionToken))
      case (None, None) =>
        if (opts.contains(AwsSessionToken))
          throw KinesisErrors.conflictingOptions("Option 'awsSessionToken' needs 'awsAccessKeyId' and 'awsSecretKey'.")
        opts.get(AwsProfile).map(CredentialsConfig.Profile).getOrElse(CredentialsConfig.DefaultChain)
      case (Some(_), None) => throw KinesisErrors.conflictingOptions(
          "Option 'awsAccessKeyId' is set but 'awsSecretKey' is not: give both, or neither to use the default credential chain.")
      case (None, Some(_)) => throw KinesisErrors.conflictingOptions(
          "Option 'awsSecretKey' is set but 'awsAccessKeyId' is not: give both, or neither to use the default credential chain.")
    }
  }
}
