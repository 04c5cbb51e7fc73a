package io.sparkkinesis.config

import java.text.{ParsePosition, SimpleDateFormat}
import java.time.{Instant, LocalDateTime, ZoneOffset, ZonedDateTime}
import java.time.format.DateTimeFormatter
import java.util.{Locale, TimeZone}

import scala.util.Try
import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.ObjectMapper

import io.sparkkinesis.errors.KinesisErrors

/** How the values of other connectors' options ([[ForeignOptions]]) become values of this connector's options. */
private[sparkkinesis] object ForeignValues {

  /** (the option's name as given, its value) to this connector's options and their text. */
  type Translation = (String, String) => Seq[(OptionSpec[_], String)]

  private val mapper = new ObjectMapper()
  private val Mi = 1024d * 1024

  /**
   * Databricks' `initialPosition`: a word as here, or `{"at_timestamp": "06/25/2020 10:23:45 PDT", "format":
   * "MM/dd/yyyy HH:mm:ss ZZZ"}` (a Java date pattern; without `format`, an ISO-8601 instant or epoch milliseconds).
   */
  val databricksInitialPosition: Translation = (name, value) =>
    if (!value.trim.startsWith("{")) Seq(KinesisOptions.InitialPosition -> value)
    else {
      val expected = "latest, trim_horizon, earliest, at_timestamp, or {\"at_timestamp\": \"06/25/2020 10:23:45 PDT\", " +
        "\"format\": \"MM/dd/yyyy HH:mm:ss ZZZ\"} (a Java date pattern; without \"format\", an ISO-8601 time such as " +
        "2026-01-31T12:00:00Z)"
      val node = Try(mapper.readTree(value)).toOption.filter(n => n != null && n.isObject)
      val time = node.flatMap(n => Option(n.get("at_timestamp"))).filter(_.isTextual).map(_.asText())
      val format = node.flatMap(n => Option(n.get("format"))).filter(_.isTextual).map(_.asText())
      val instant = time.flatMap(t => format.fold(OptionKind.Timestamp.parse(t))(f => withPattern(t, f)))
      instant match {
        case Some(at) => atTimestamp(at)
        case None => throw KinesisErrors.invalidOptionValue(name, value, expected)
      }
    }

  /** A start at `at`, in this connector's options. */
  private def atTimestamp(at: Instant): Seq[(OptionSpec[_], String)] =
    Seq(KinesisOptions.InitialPosition -> "at_timestamp", KinesisOptions.InitialTimestamp -> at.toEpochMilli.toString)

  /** A time in a Java date pattern: SimpleDateFormat's reading first (it takes "PDT" for "ZZZ"), then java.time's. */
  private[config] def withPattern(text: String, pattern: String): Option[Instant] = {
    val legacy = Try {
      val format = new SimpleDateFormat(pattern, Locale.US)
      format.setLenient(false)
      format.setTimeZone(TimeZone.getTimeZone("UTC"))
      val at = new ParsePosition(0)
      val date = format.parse(text.trim, at)
      if (date == null || at.getIndex != text.trim.length) throw new IllegalArgumentException(text)
      date.toInstant
    }
    lazy val formatter = Try(DateTimeFormatter.ofPattern(pattern, Locale.US))
    legacy.toOption
      .orElse(formatter.flatMap(f => Try(ZonedDateTime.parse(text.trim, f).toInstant)).toOption)
      .orElse(formatter.flatMap(f => Try(LocalDateTime.parse(text.trim, f).toInstant(ZoneOffset.UTC))).toOption)
  }

  /**
   * awslabs' `kinesis.startingPosition` and qubole's `startingPosition`: LATEST, TRIM_HORIZON, EARLIEST, or (awslabs)
   * `AT_TIMESTAMP 2023-08-30T19:00:05Z`. Their per-shard JSON form is refused with the option to use instead.
   */
  val startingPosition: Translation = (name, value) => {
    val text = value.trim
    val upper = text.toUpperCase(Locale.ROOT)
    if (upper.startsWith("AT_TIMESTAMP")) {
      val time = text.drop("AT_TIMESTAMP".length).trim
      OptionKind.Timestamp.parse(time) match {
        case Some(at) => atTimestamp(at)
        case None => throw KinesisErrors.invalidOptionValue(name, value,
            "AT_TIMESTAMP followed by an ISO-8601 time such as AT_TIMESTAMP 2023-08-30T19:00:05Z")
      }
    } else if (text.startsWith("{"))
      throw KinesisErrors.invalidOptionValue(name, value.take(200),
        "LATEST, TRIM_HORIZON, EARLIEST or AT_TIMESTAMP <time>: per-shard positions are given here with option " +
          "'initialShardPositions' ({\"<stream>\": {\"<shardId>\": \"<sequence number read last>\"}}, docs/options.md)")
    else Seq(KinesisOptions.InitialPosition -> text)
  }

  /** awslabs' `kinesis.consumerType`: GetRecords (polling) or SubscribeToShard (enhanced fan-out). */
  val consumerType: Translation = (name, value) =>
    value.trim.toLowerCase(Locale.ROOT) match {
      case "getrecords" => Seq(KinesisOptions.ConsumerMode -> "polling")
      case "subscribetoshard" => Seq(KinesisOptions.ConsumerMode -> "efo")
      case _ => throw KinesisErrors.invalidOptionValue(name, value, "GetRecords or SubscribeToShard")
    }

  /** `aggregationEnabled` (awslabs, qubole): true packs records KPL-style, false sends them one by one. */
  val aggregationEnabled: Translation = (name, value) =>
    OptionKind.Bool.parse(value) match {
      case Some(true) => Seq(KinesisOptions.Aggregation -> "kpl")
      case Some(false) => Seq(KinesisOptions.Aggregation -> "none")
      case None => throw KinesisErrors.invalidOptionValue(name, value, OptionKind.Bool.describe)
    }

  /** Databricks' `endpoint` and `stsEndpoint`: a URL, or a host name, which is reached over https. */
  def endpoint(target: OptionSpec[String]): Translation = (_, value) =>
    Seq(target -> (if (value.contains("://")) value.trim else "https://" + value.trim))

  /**
   * Databricks' `maxFetchRate`: MB/s per shard as a number below 1024 (1.0, 1.5), which this connector's form (bytes,
   * at least 1024, or a size with a suffix) never is; other values are this connector's.
   */
  val databricksFetchRate: Translation = (_, value) =>
    Seq(KinesisOptions.MaxFetchRate -> Try(BigDecimal(value.trim)).toOption.filter(mb => mb > 0 && mb < 1024)
      .map(mb => (mb * Mi).toLong.toString).getOrElse(value))

  /** A resharding interval of awslabs or qubole (1s by default there): at least one second here. */
  val discoveryInterval: Translation = (name, value) => {
    val any = OptionKind.TimeSpan(java.time.Duration.ZERO, java.time.Duration.ofHours(1))
    val parsed =
      try any.parse(value)
      catch { case NonFatal(_) => None }
    parsed match {
      case Some(d) if d.toMillis < 1000 => Seq(KinesisOptions.ShardDiscoveryInterval -> "1s")
      case Some(_) => Seq(KinesisOptions.ShardDiscoveryInterval -> value)
      case None => throw KinesisErrors.invalidOptionValue(name, value, any.describe)
    }
  }
}
