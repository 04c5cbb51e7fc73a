package io.sparkkinesis.aws

import java.net.URI
import software.amazon.awssdk.auth.credentials._
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient
import software.amazon.awssdk.regions.Region
import software.amazon.awssdk.services.sts.{StsClient, StsClientBuilder}
import software.amazon.awssdk.services.sts.auth.{
  StsAssumeRoleCredentialsProvider,
  StsAssumeRoleWithWebIdentityCredentialsProvider
}
import software.amazon.awssdk.services.sts.model.{AssumeRoleRequest, AssumeRoleWithWebIdentityRequest}

import io.sparkkinesis.config.KinesisOptions

/**
 * Builds the SDK credentials provider of a [[CredentialsConfig]]. A role chain is built from the base outwards:
 * each role's STS client signs with the provider of the one before, so when a role's credentials near their expiry
 * its provider calls STS with the previous role's credentials, which that provider has kept fresh the same way. The
 * STS providers refresh in the background ([[RefreshAhead]] before expiry), never on a record's path.
 */
private[sparkkinesis] object CredentialProviders {

  /** How long before expiry STS credentials are fetched again in the background (the SDK's default is 5 minutes). */
  val RefreshAhead: java.time.Duration = java.time.Duration.ofMinutes(5)

  /** The provider of `c` and what was built for it (closed with the client that uses it). */
  def of(
      c: CredentialsConfig,
      region: String,
      variants: EndpointVariants): (AwsCredentialsProvider, Seq[AutoCloseable]) =
    c match {
      case CredentialsConfig.StaticKeys(id, secret, None) =>
        (StaticCredentialsProvider.create(AwsBasicCredentials.create(id, secret)), Nil)
      case CredentialsConfig.StaticKeys(id, secret, Some(token)) =>
        (StaticCredentialsProvider.create(AwsSessionCredentials.create(id, secret, token)), Nil)
      case CredentialsConfig.DefaultChain =>
        val p = DefaultCredentialsProvider.builder().build()
        (p, Seq(p))
      case CredentialsConfig.Profile(name) =>
        val p = ProfileCredentialsProvider.builder().profileName(name).build()
        (p, Seq(p))
      case CredentialsConfig.Container(uri, tokenFile) =>
        val p = new ContainerCredentials(URI.create(uri), tokenFile)
        (p, Seq(p))
      case w: CredentialsConfig.WebIdentity =>
        // AssumeRoleWithWebIdentity is not signed: the token is the proof.
        val sts = stsClient(AnonymousCredentialsProvider.create(), region, variants, w.stsEndpointUrl)
        val p = StsAssumeRoleWithWebIdentityCredentialsProvider.builder().stsClient(sts)
          .asyncCredentialUpdateEnabled(true).prefetchTime(RefreshAhead)
          .refreshRequest(() =>
            AssumeRoleWithWebIdentityRequest.builder().roleArn(w.roleArn).roleSessionName(w.sessionName)
              .webIdentityToken(TokenFile.read(w.tokenFile, "web identity token",
                  KinesisOptions.WebIdentityTokenFile)).build())
          .build()
        (p, Seq(p, sts))
      case r: CredentialsConfig.AssumeRole =>
        val (base, baseCloseables) = of(r.base, region, variants)
        val sts = stsClient(base, region, variants, r.stsEndpointUrl)
        val request = AssumeRoleRequest.builder().roleArn(r.roleArn).roleSessionName(r.sessionName)
        r.externalId.foreach(request.externalId)
        val p = StsAssumeRoleCredentialsProvider.builder().stsClient(sts).refreshRequest(request.build())
          .asyncCredentialUpdateEnabled(true).prefetchTime(RefreshAhead).build()
        // Closed outermost first: a refresh under way on the base never outlives the provider that asked for it.
        (p, Seq(p, sts) ++ baseCloseables)
    }

  private def stsClient(
      credentials: AwsCredentialsProvider,
      region: String,
      variants: EndpointVariants,
      endpointUrl: Option[String]): StsClient = {
    val builder: StsClientBuilder = StsClient.builder()
      .region(Region.of(region))
      .credentialsProvider(credentials)
      .httpClientBuilder(UrlConnectionHttpClient.builder().connectionTimeout(KinesisClients.ConnectTimeout))
    variants.applyTo(builder, endpointUrl).build()
  }
}
