package io.sparkkinesis.aws

import io.sparkkinesis.config.StreamNamePatterns
import io.sparkkinesis.errors.KinesisErrors

/** A stream named by the user, by name or by ARN. API calls use the ARN when one was given. */
private[sparkkinesis] final case class StreamRef(name: String, arn: Option[String], arnRegion: Option[String]) {
  override def toString: String = arn.getOrElse(name)
}

private[sparkkinesis] object StreamRef {
  private val NamePattern = StreamNamePatterns.Name.r
  private val ArnPattern = StreamNamePatterns.Arn.r

  def parse(text: String): StreamRef = text.trim match {
    case ArnPattern(_, region, _, name) => StreamRef(name, Some(text.trim), Some(region))
    case n @ NamePattern() => StreamRef(n, None, None)
    case other => throw KinesisErrors.invalidStreamName(other)
  }

  /** A comma-separated list of names or ARNs, in the given order, without repeats. */
  def parseList(text: String): Seq[StreamRef] = {
    val refs = text.split(",").iterator.map(_.trim).filter(_.nonEmpty).map(parse).toSeq.distinct
    if (refs.isEmpty) throw KinesisErrors.invalidStreamName(text)
    if (refs.map(_.name).distinct.size != refs.size)
      throw KinesisErrors.conflictingOptions(
        s"Option 'streamName' names the stream '${refs.groupBy(_.name).collectFirst { case (n, rs) if rs.size > 1 => n }.get}' " +
          "more than once (by name and by ARN, or by ARNs of different accounts); name each stream once.")
    refs
  }
}
