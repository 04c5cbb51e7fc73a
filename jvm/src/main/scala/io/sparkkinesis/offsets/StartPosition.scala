package io.sparkkinesis.offsets

import java.util.Locale

/** Where reading a shard begins. Sequence numbers are kept as the decimal strings Kinesis uses. */
private[sparkkinesis] sealed trait StartPosition extends Serializable
private[sparkkinesis] object StartPosition {
  case object TrimHorizon extends StartPosition
  case object Latest extends StartPosition
  final case class AtTimestamp(epochMillis: Long) extends StartPosition
  final case class AtSequence(sequenceNumber: String) extends StartPosition
  final case class AfterSequence(sequenceNumber: String) extends StartPosition

  /** The `initialPosition` words as the registry accepts them (already lower-cased). */
  def fromOption(word: String, timestamp: => Option[java.time.Instant]): StartPosition =
    word.toLowerCase(Locale.ROOT) match {
      case "trim_horizon" | "earliest" => TrimHorizon
      case "latest" => Latest
      case "at_timestamp" => AtTimestamp(timestamp.get.toEpochMilli)
    }
}
