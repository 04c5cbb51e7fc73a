package io.sparkkinesis.aws

import java.net.URI
import java.util.concurrent.ConcurrentLinkedQueue

import io.sparkkinesis.compat.CollectionConverters._

import org.apache.logging.log4j.{Level, LogManager}
import org.apache.logging.log4j.core.{LogEvent, LoggerContext}
import org.apache.logging.log4j.core.appender.AbstractAppender
import org.apache.logging.log4j.core.config.{Configurator, Property}
import org.scalatest.funsuite.AnyFunSuite

import software.amazon.awssdk.auth.credentials.AwsSessionCredentials
import software.amazon.awssdk.http.{ContentStreamProvider, SdkHttpMethod, SdkHttpRequest}
import software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner

class SignerLogGuardSuite extends AnyFunSuite {

  private final class Capture extends AbstractAppender("capture", null, null, true, Property.EMPTY_ARRAY) {
    val messages = new ConcurrentLinkedQueue[String]()
    override def append(event: LogEvent): Unit = messages.add(event.getMessage.getFormattedMessage)
  }

  private val token = "SESSION-TOKEN-that-must-stay-secret"

  /** Signs one Kinesis request with temporary credentials and returns what the signer logged. */
  private def signAndCapture(): Seq[String] = {
    val context = LogManager.getContext(false).asInstanceOf[LoggerContext]
    val capture = new Capture
    capture.start()
    val loggers = SignerLogGuard.Loggers.map(context.getLogger)
    loggers.foreach(l => context.getConfiguration.addLoggerAppender(l, capture))
    try {
      val request = SdkHttpRequest.builder().method(SdkHttpMethod.POST)
        .uri(URI.create("https://kinesis.us-east-1.amazonaws.com/"))
        .putHeader("X-Amz-Target", "Kinesis_20131202.ListStreams").build()
      AwsV4HttpSigner.create().sign {
        (r: software.amazon.awssdk.http.auth.spi.signer.SignRequest.Builder[
          software.amazon.awssdk.identity.spi.AwsCredentialsIdentity]) =>
          r.request(request).payload(ContentStreamProvider.fromUtf8String("{}"))
            .identity(AwsSessionCredentials.create("AKIDEXAMPLE", "secret-key", token))
            .putProperty(software.amazon.awssdk.http.auth.aws.signer.AwsV4FamilyHttpSigner.SERVICE_SIGNING_NAME,
              "kinesis")
            .putProperty(AwsV4HttpSigner.REGION_NAME, "us-east-1")
          ()
      }
      capture.messages.asScala.toSeq
    } finally {
      loggers.foreach(l => l.removeAppender(capture))
      capture.stop()
    }
  }

  test("at DEBUG the SDK's signer logs the session token; once a client is built it no longer does") {
    SignerLogGuard.removeForTest() // another suite of this JVM may have built a client already
    SignerLogGuard.Loggers.foreach(Configurator.setLevel(_, Level.DEBUG))
    val unguarded = signAndCapture()
    // The premise: without the guard, DEBUG logging of the signer leaks the token.
    assert(unguarded.exists(_.contains(token)), s"the signer logged no token at DEBUG: $unguarded")

    KinesisClients.sync(AwsConnection("us-east-1", Some("http://127.0.0.1:1"),
        CredentialsConfig.StaticKeys("AKIDEXAMPLE", "secret-key", None), cborEnabled = false))
    assert(SignerLogGuard.Loggers.forall(n => !LogManager.getLogger(n).isDebugEnabled))
    val guarded = signAndCapture()
    assert(!guarded.exists(_.contains(token)), guarded)
  }

  test("once a client exists, raising every level to DEBUG afterwards (Spark's setLogLevel) logs no token") {
    KinesisClients.sync(AwsConnection("us-east-1", Some("http://127.0.0.1:1"),
        CredentialsConfig.StaticKeys("AKIDEXAMPLE", "secret-key", None), cborEnabled = false))
    val context = LogManager.getContext(false).asInstanceOf[LoggerContext]
    val root = context.getRootLogger.getLevel
    try {
      // What SparkContext.setLogLevel("DEBUG") does: every logger, the signer's included, to DEBUG.
      Configurator.setAllLevels(LogManager.ROOT_LOGGER_NAME, Level.DEBUG)
      assert(context.getLogger(SignerLogGuard.Loggers.head).getLevel == Level.DEBUG, "the premise: the level is DEBUG")
      val logged = signAndCapture()
      assert(!logged.exists(_.contains(token)), logged)
    } finally Configurator.setAllLevels(LogManager.ROOT_LOGGER_NAME, root)
  }

  test("a reconfiguration after the clients exist (a log4j2 file with the root at DEBUG) logs no token either") {
    KinesisClients.sync(AwsConnection("us-east-1", Some("http://127.0.0.1:1"),
        CredentialsConfig.StaticKeys("AKIDEXAMPLE", "secret-key", None), cborEnabled = false))
    val context = LogManager.getContext(false).asInstanceOf[LoggerContext]
    val previous = context.getConfigLocation
    val file = java.nio.file.Files.createTempFile("log4j2-debug", ".properties")
    java.nio.file.Files.write(file,
      Seq("rootLogger.level = debug", "rootLogger.appenderRef.stdout.ref = out",
        "appender.out.type = Null", "appender.out.name = out").mkString("\n").getBytes("UTF-8"))
    try {
      context.setConfigLocation(file.toUri)
      assert(context.getLogger(SignerLogGuard.Loggers.head).getLevel == Level.DEBUG, "the premise: the file sets DEBUG")
      val logged = signAndCapture()
      assert(!logged.exists(_.contains(token)), logged)
    } finally if (previous != null) context.setConfigLocation(previous) else context.reconfigure()
  }

  test("the guard drops only what is below INFO from the signer and credential loggers") {
    val signer = SignerLogGuard.Loggers.head
    assert(!SignerLogGuard.allows(signer + ".internal.signer.SomeSigner", Level.DEBUG))
    assert(!SignerLogGuard.allows(signer, Level.TRACE))
    assert(SignerLogGuard.allows(signer + ".internal", Level.INFO))
    assert(SignerLogGuard.allows(signer + ".internal", Level.WARN))
    assert(SignerLogGuard.allows("org.apache.spark.scheduler.DAGScheduler", Level.DEBUG))
    assert(SignerLogGuard.allows(signer + "x.Other", Level.DEBUG), "a package that only shares a prefix")
    // Netty's wire logger, which the async client's channels log each request's headers to at DEBUG.
    assert(!SignerLogGuard.allows(classOf[io.netty.handler.logging.LoggingHandler].getName, Level.DEBUG))
    assert(SignerLogGuard.allows(classOf[io.netty.channel.Channel].getName, Level.DEBUG))
  }
}
