package io.sparkkinesis.aws

import scala.util.control.NonFatal

import org.apache.logging.log4j.{Level, LogManager}
import org.apache.logging.log4j.core.config.Configurator

/**
 * Keeps the AWS SDK's request signers out of DEBUG logging. At DEBUG they log canonical requests, whose signed
 * headers include the session token of temporary credentials (AssumeRole, instance and container roles), so a
 * cluster with `log4j.rootLogger=DEBUG` would write secrets to its logs. Before the connector builds a client it
 * raises these loggers to INFO when they are more verbose; nothing else in the logging set-up is touched.
 *
 * The logger names come from SDK classes, so in the assembly jar they are the relocated ones
 * (`io.sparkkinesis.shaded.software.amazon.awssdk...`).
 */
private[sparkkinesis] object SignerLogGuard {

  /** The signer packages: the current one (http-auth-aws) and the legacy one (auth.signer). */
  val Loggers: Seq[String] = Seq(
    classOf[software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner].getPackageName.stripSuffix(".signer"),
    classOf[software.amazon.awssdk.auth.signer.Aws4Signer].getPackageName)

  def apply(): Unit = Loggers.foreach { name =>
    try {
      if (LogManager.getLogger(name).isDebugEnabled) Configurator.setLevel(name, Level.INFO)
    } catch {
      case NonFatal(_) | _: LinkageError => // not log4j 2 underneath: nothing this guard can do
    }
  }
}
