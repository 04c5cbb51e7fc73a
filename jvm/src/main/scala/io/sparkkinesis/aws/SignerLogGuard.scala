package io.sparkkinesis.aws

import java.beans.PropertyChangeEvent
import java.util.Collections

import scala.annotation.nowarn
import scala.util.control.NonFatal

import org.apache.logging.log4j.{Level, LogManager, Marker}
import org.apache.logging.log4j.core.{Filter, LogEvent, Logger, LoggerContext}
import org.apache.logging.log4j.core.config.{Configuration, Configurator}
import org.apache.logging.log4j.core.filter.{AbstractFilter, CompositeFilter}
import org.apache.logging.log4j.message.Message

/**
 * Keeps the AWS SDK's request signers and credential providers out of DEBUG logging, whatever happens to the log
 * levels. At DEBUG the signers log canonical requests, whose signed headers include the session token of temporary
 * credentials (AssumeRole, instance and container roles), so a cluster at DEBUG would write secrets to its logs.
 *
 * Before the connector builds a client it installs a context-wide log4j 2 filter that drops events below INFO
 * from these loggers (and raises their levels to INFO). A filter, unlike a level, survives `setLogLevel("DEBUG")`
 * and `Configurator.setAllLevels` after the clients exist; a reconfiguration (a changed log4j2 file, `reconfigure`)
 * replaces the configuration, so the guard listens for that and installs the filter on the new one. Nothing else
 * in the logging set-up is touched.
 *
 * The logger names come from SDK classes, so in the assembly jar they are the relocated ones
 * (`io.sparkkinesis.shaded.software.amazon.awssdk...`).
 */
private[sparkkinesis] object SignerLogGuard {

  /**
   * The signer packages (http-auth-aws, the legacy auth.signer), the credential providers (SDK, STS), and Netty's
   * wire logger, which the SDK's async HTTP client adds to its channels at DEBUG and which logs each request's
   * headers, the session token among them.
   */
  val Loggers: Seq[String] = Seq(
    classOf[software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner].getPackageName.stripSuffix(".signer"),
    legacySigners,
    classOf[software.amazon.awssdk.auth.credentials.AwsCredentialsProvider].getPackageName,
    classOf[software.amazon.awssdk.services.sts.auth.StsAssumeRoleCredentialsProvider].getPackageName,
    classOf[io.netty.handler.logging.LoggingHandler].getName)

  /**
   * The legacy signer's package, named through its class (which the SDK deprecates) so that the assembly's relocation
   * renames it too: an SDK part that still signs with it logs there.
   */
  @nowarn("cat=deprecation")
  private def legacySigners: String = classOf[software.amazon.awssdk.auth.signer.Aws4Signer].getPackageName

  /** Whether an event of `level` from logger `name` may be logged. */
  def allows(name: String, level: Level): Boolean =
    name == null || level == null || level.intLevel() <= Level.INFO.intLevel() ||
      !Loggers.exists(p => name == p || name.startsWith(p + "."))

  /** Drops what [[allows]] refuses; says nothing about every other event. */
  private object QuietSigners extends AbstractFilter(Filter.Result.DENY, Filter.Result.NEUTRAL) {
    private def decide(name: String, level: Level): Filter.Result =
      if (allows(name, level)) Filter.Result.NEUTRAL else Filter.Result.DENY

    override def filter(event: LogEvent): Filter.Result = decide(event.getLoggerName, event.getLevel)
    override def filter(logger: Logger, level: Level, marker: Marker, msg: String, params: Object*): Filter.Result =
      decide(logger.getName, level)
    override def filter(logger: Logger, level: Level, marker: Marker, msg: Object, t: Throwable): Filter.Result =
      decide(logger.getName, level)
    override def filter(logger: Logger, level: Level, marker: Marker, msg: Message, t: Throwable): Filter.Result =
      decide(logger.getName, level)
  }

  QuietSigners.start()

  private val watched = Collections.newSetFromMap(new java.util.WeakHashMap[LoggerContext, java.lang.Boolean]())

  def apply(): Unit =
    try {
      LogManager.getContext(false) match {
        case context: LoggerContext =>
          watched.synchronized {
            if (watched.add(context)) context.addPropertyChangeListener((e: PropertyChangeEvent) =>
              if (e.getPropertyName == LoggerContext.PROPERTY_CONFIG) install(context))
          }
          install(context)
        case _ => // not log4j 2's core underneath: nothing this guard can do
      }
    } catch {
      case NonFatal(_) | _: LinkageError =>
    }

  private def install(context: LoggerContext): Unit = context.synchronized {
    val configuration = context.getConfiguration
    if (!installedOn(configuration)) {
      configuration.addFilter(QuietSigners)
      context.updateLoggers()
    }
    Loggers.foreach { name =>
      if (LogManager.getLogger(name).isDebugEnabled) Configurator.setLevel(name, Level.INFO)
    }
  }

  /** Takes the filter off the current configuration, for tests that show what happens without it. */
  private[aws] def removeForTest(): Unit = LogManager.getContext(false) match {
    case context: LoggerContext =>
      context.synchronized {
        context.getConfiguration.removeFilter(QuietSigners)
        context.updateLoggers()
      }
    case _ =>
  }

  private def installedOn(configuration: Configuration): Boolean = configuration.getFilter match {
    case null => false
    case composite: CompositeFilter => composite.getFiltersArray.contains(QuietSigners)
    case single => single eq QuietSigners
  }
}
