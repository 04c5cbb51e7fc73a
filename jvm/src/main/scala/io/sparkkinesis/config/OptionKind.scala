package io.sparkkinesis.config

import java.time.{Duration, Instant}
import java.time.format.DateTimeParseException
import java.util.Locale

import scala.util.Try

import io.sparkkinesis.errors.KinesisErrors
import io.sparkkinesis.compat.ScalaCompat._

/** How the text of one option is turned into a typed value; `describe` is what the user is told to give. */
sealed abstract class OptionKind[T](val typeName: String) extends Serializable {
  def describe: String
  def parse(raw: String): Option[T]
  def render(value: T): String = value.toString
}

private[sparkkinesis] object OptionKind {

  case object Text extends OptionKind[String]("string") {
    def describe = "a non-empty string"
    def parse(raw: String): Option[String] = Some(raw.trim).filter(_.nonEmpty)
  }

  /**
   * Text kept exactly as given, spaces and line ends included: a schema's text, which the Glue Schema Registry
   * compares byte for byte when it looks a definition up. Blank text is no value.
   */
  case object Verbatim extends OptionKind[String]("string") {
    def describe = "a non-empty string"
    def parse(raw: String): Option[String] = Some(raw).filter(_.trim.nonEmpty)
  }

  case object Bool extends OptionKind[Boolean]("boolean") {
    def describe = "true or false"
    def parse(raw: String): Option[Boolean] = raw.trim.toLowerCase(Locale.ROOT) match {
      case "true" => Some(true)
      case "false" => Some(false)
      case _ => None
    }
  }

  final case class Integer(min: Int, max: Int) extends OptionKind[Int]("int") {
    def describe = s"a whole number from $min to $max"
    def parse(raw: String): Option[Int] = raw.trim.toIntOption.filter(v => v >= min && v <= max)
  }

  final case class LongNumber(min: Long, max: Long) extends OptionKind[Long]("long") {
    def describe = s"a whole number from $min to $max"
    def parse(raw: String): Option[Long] = raw.trim.toLongOption.filter(v => v >= min && v <= max)
  }

  /** One of a fixed set of lower-case words (matched case-insensitively). */
  final case class Choice(values: Seq[String]) extends OptionKind[String]("enum") {
    def describe = s"one of ${values.mkString(", ")}"
    def parse(raw: String): Option[String] = Some(raw.trim.toLowerCase(Locale.ROOT)).filter(values.contains)
  }

  /** A byte size: a plain number of bytes or a number with a suffix: 512k, 5m, 1g (binary units). */
  final case class Bytes(min: Long, max: Long) extends OptionKind[Long]("bytes") {
    def describe = s"a size in bytes from $min to $max, optionally with a suffix k, m or g (binary units), e.g. 5m"
    def parse(raw: String): Option[Long] = {
      val s = raw.trim.toLowerCase(Locale.ROOT).stripSuffix("b").stripSuffix("i")
      val (digits, mult) = s.lastOption match {
        case Some('k') => (s.init, 1024L)
        case Some('m') => (s.init, 1024L * 1024)
        case Some('g') => (s.init, 1024L * 1024 * 1024)
        case _ => (s, 1L)
      }
      digits.trim.toLongOption.map(_ * mult).filter(v => v >= min && v <= max)
    }
    override def render(value: Long): String = value.toString
  }

  /** A duration: a number with a unit (ms, s, m, h); a bare number means milliseconds. */
  final case class TimeSpan(min: Duration, max: Duration) extends OptionKind[Duration]("duration") {
    def describe = s"a duration from ${fmt(min)} to ${fmt(max)} such as 200ms, 5s or 2m"
    def parse(raw: String): Option[Duration] = {
      val s = raw.trim.toLowerCase(Locale.ROOT)
      val units = Seq("ms" -> 1L, "s" -> 1000L, "m" -> 60000L, "h" -> 3600000L)
      val parsed = units.collectFirst {
        case (u, ms) if s.endsWith(u) && s.dropRight(u.length).trim.toLongOption.isDefined =>
          s.dropRight(u.length).trim.toLong * ms
      }.orElse(s.toLongOption)
      parsed.map(Duration.ofMillis).filter(d => d.compareTo(min) >= 0 && d.compareTo(max) <= 0)
    }
    override def render(value: Duration): String = fmt(value)
    private def fmt(d: Duration): String = if (d.toMillis % 1000 == 0) s"${d.toMillis / 1000}s" else s"${d.toMillis}ms"
  }

  /** A point in time: ISO-8601 with an offset (2026-01-31T12:00:00Z) or milliseconds since the epoch. */
  case object Timestamp extends OptionKind[Instant]("timestamp") {
    def describe = "an ISO-8601 instant such as 2026-01-31T12:00:00Z, or milliseconds since the epoch"
    def parse(raw: String): Option[Instant] = {
      val s = raw.trim
      s.toLongOption.map(Instant.ofEpochMilli).orElse(
        Try(Instant.parse(s)).recoverWith { case _: DateTimeParseException =>
          Try(java.time.OffsetDateTime.parse(s).toInstant)
        }.toOption)
    }
  }

  private[config] def parseOrFail[T](spec: OptionSpec[T], raw: String, name: String = ""): T =
    spec.kind.parse(raw).getOrElse(throw KinesisErrors.invalidOptionValue(if (name.isEmpty) spec.name else name, raw,
        spec.kind.describe, spec.secret))
}
