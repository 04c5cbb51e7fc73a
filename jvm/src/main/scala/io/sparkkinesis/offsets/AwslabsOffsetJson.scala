package io.sparkkinesis.offsets

import java.util.Locale

import io.sparkkinesis.compat.CollectionConverters._
import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}

import io.sparkkinesis.errors.KinesisErrors

/**
 * Reads the offsets of the awslabs connector (awslabs/spark-sql-kinesis-connector), as its README and offset
 * classes publish them, so a query can go on from its checkpoint (see `source.AwslabsCheckpoint`). Two shapes:
 *  - the source's entry in Spark's offset log, where every batch starts:
 *    `{"metadata":{"streamName":"orders","batchId":"7"},"shardId-000000000000":{"iteratorType":
 *    "AFTER_SEQUENCE_NUMBER","iteratorPosition":"4959...","subSequenceNumber":"-1","isLast":"true"}, ...}`;
 *  - a shard's file beside it (`shard-source/<batch>/<shardId>`), where that batch ended in the shard:
 *    `{"shardId":"shardId-000000000000","iteratorType":"AFTER_SEQUENCE_NUMBER","iteratorPosition":"4959...",
 *    "subSequenceNumber":-1,"isLast":true}` (numbers and booleans may be strings in either).
 * This connector never writes them.
 */
private[sparkkinesis] object AwslabsOffsetJson {

  /** A position as they write it: an iterator type, its argument, and the KPL sub-record (-1 outside aggregates). */
  final case class Position(iteratorType: String, argument: String, subSequence: Long, isLast: Boolean)

  /** Their offset-log entry: the batch it starts, the stream, and each shard's position. */
  final case class Entry(batchId: Long, stream: String, shards: Map[String, Position])

  private val mapper = new ObjectMapper()

  val Example: String = """{"metadata":{"streamName":"orders","batchId":"7"},"shardId-000000000000":{""" +
    """"iteratorType":"AFTER_SEQUENCE_NUMBER","iteratorPosition":"49590338271490256608559692538361571095921575989136588898",""" +
    """"subSequenceNumber":"-1","isLast":"true"}}"""

  /** Whether `json` is an awslabs offset rather than one of this connector's (those have `version`). */
  def isTheirs(json: String): Boolean =
    try {
      val root = mapper.readTree(json)
      root != null && root.isObject && root.has("metadata") && root.get("metadata").isObject && !root.has("version")
    } catch { case NonFatal(_) => false }

  def readEntry(json: String, where: String): Entry = reading(json, where) { root =>
    val metadata = root.get("metadata")
    val batch = text(metadata, "batchId", "metadata")
    if (!batch.matches("-?[0-9]{1,18}")) fail(s"'batchId' in metadata must be a whole number, not '$batch'")
    val shards = root.properties().asScala.filter(_.getKey != "metadata").map { e =>
      if (!e.getValue.isObject) fail(s"shard '${e.getKey}' must be a JSON object")
      e.getKey -> position(e.getValue, s"shard '${e.getKey}'")
    }.toMap
    Entry(batch.toLong, text(metadata, "streamName", "metadata"), shards)
  }

  /** A shard file: its shard id and where the batch ended in it. */
  def readShardFile(json: String, where: String): (String, Position) = reading(json, where) { root =>
    text(root, "shardId", "the shard file") -> position(root, "the shard file")
  }

  /**
   * Their position as this connector's, `latestAt` standing in for LATEST: a shard they have read nothing from
   * since the query started is LATEST in their metadata, and reading it again from a time no later than the one
   * their reader began at neither skips a record nor reads one twice.
   */
  def toShardPosition(p: Position, latestAt: => Long): ShardPosition = p.iteratorType.toUpperCase(Locale.ROOT) match {
    case "AFTER_SEQUENCE_NUMBER" =>
      if (p.subSequence < 0) ShardPosition.After(RecordPosition(p.argument, 0L, lastInAggregate = true))
      else ShardPosition.After(RecordPosition(p.argument, p.subSequence, p.isLast))
    case "AT_SEQUENCE_NUMBER" =>
      if (p.subSequence <= 0) ShardPosition.NotStarted(StartPosition.AtSequence(p.argument))
      else ShardPosition.After(RecordPosition(p.argument, p.subSequence - 1, lastInAggregate = false))
    case "TRIM_HORIZON" => ShardPosition.NotStarted(StartPosition.TrimHorizon)
    case "AT_TIMESTAMP" => ShardPosition.NotStarted(StartPosition.AtTimestamp(p.argument.toLong))
    case "LATEST" => ShardPosition.NotStarted(StartPosition.AtTimestamp(latestAt))
    case "SHARD_END" => ShardPosition.Ended
  }

  private val Types = Set("AFTER_SEQUENCE_NUMBER", "AT_SEQUENCE_NUMBER", "TRIM_HORIZON", "AT_TIMESTAMP", "LATEST",
    "SHARD_END")

  private def position(n: JsonNode, at: String): Position = {
    val kind = text(n, "iteratorType", at).toUpperCase(Locale.ROOT)
    if (!Types.contains(kind)) fail(s"unknown iteratorType '$kind' (in $at)")
    val argument = Option(n.get("iteratorPosition")).filter(!_.isNull).map(_.asText()).getOrElse("")
    val needsDigits = kind.endsWith("SEQUENCE_NUMBER") || kind == "AT_TIMESTAMP"
    if (needsDigits && !argument.matches("[0-9]{1,128}")) fail(s"'iteratorPosition' must be digits for $kind (in $at)")
    val sub = Option(n.get("subSequenceNumber")).map(_.asText()).getOrElse("-1")
    if (!sub.matches("-?[0-9]{1,18}")) fail(s"'subSequenceNumber' must be a whole number (in $at)")
    val last = Option(n.get("isLast")).map(_.asText().toLowerCase(Locale.ROOT)).getOrElse("true")
    if (last != "true" && last != "false") fail(s"'isLast' must be true or false (in $at)")
    Position(kind, argument, sub.toLong, last == "true")
  }

  private def text(n: JsonNode, name: String, at: String): String =
    Option(n.get(name)).filter(v => v.isTextual || v.isNumber).map(_.asText()).filter(_.nonEmpty)
      .getOrElse(fail(s"field '$name' is missing (in $at)"))

  private final class FormatException(message: String) extends Exception(message)
  private def fail(why: String): Nothing = throw new FormatException(why)

  private def reading[T](json: String, where: String)(read: JsonNode => T): T =
    try {
      val root = mapper.readTree(json)
      if (root == null || !root.isObject) fail("it is not a JSON object")
      read(root)
    } catch {
      case NonFatal(e) => throw KinesisErrors.badOffset(where, json, s"${e.getMessage} (an awslabs offset)", Example)
    }
}
