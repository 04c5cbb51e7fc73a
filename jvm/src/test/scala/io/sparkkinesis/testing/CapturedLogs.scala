package io.sparkkinesis.testing

import java.util.concurrent.ConcurrentLinkedQueue

import io.sparkkinesis.compat.CollectionConverters._

import org.apache.logging.log4j.{Level, LogManager}
import org.apache.logging.log4j.core.{LogEvent, LoggerContext}
import org.apache.logging.log4j.core.appender.AbstractAppender
import org.apache.logging.log4j.core.config.Property

/** What one logger of this JVM logs at WARN or above while it is captured: an appender added to it, then removed. */
final class CapturedLogs(logger: String) extends AutoCloseable {
  private val messages = new ConcurrentLinkedQueue[String]()
  private val appender = new AbstractAppender(s"captured-${System.nanoTime()}", null, null, true,
    Property.EMPTY_ARRAY) {
    override def append(event: LogEvent): Unit =
      if (event.getLevel.isMoreSpecificThan(Level.WARN)) messages.add(event.getMessage.getFormattedMessage)
  }
  private val target = LogManager.getContext(false).asInstanceOf[LoggerContext].getLogger(logger)
  appender.start()
  target.getContext.getConfiguration.addLoggerAppender(target, appender)

  /** The messages captured so far, in order. */
  def warnings: Seq[String] = messages.asScala.toSeq

  override def close(): Unit = {
    target.removeAppender(appender)
    appender.stop()
  }
}
