package io.sparkkinesis.offsets

import io.sparkkinesis.compat.CollectionConverters._
import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import com.fasterxml.jackson.databind.node.{JsonNodeFactory, ObjectNode}

import io.sparkkinesis.errors.KinesisErrors

/**
 * The one JSON codec of [[KinesisSourceOffset]]. Output is deterministic (streams and shards sorted). Version 1:
 * {{{
 * {"version":1,"streams":{"orders":{
 *   "shardId-000000000000":{"after":"4959...","sub":0,"lastSub":true},
 *   "shardId-000000000001":{"start":"trim_horizon"},
 *   "shardId-000000000002":{"start":"at_timestamp","timestampMs":1769860800000},
 *   "shardId-000000000003":{"start":"at_sequence","sequence":"4959..."},
 *   "shardId-000000000004":{"ended":true},
 *   "shardId-000000000005":{"after":"4959...","sub":0,"lastSub":true,"first":"4959..."}}}}
 * }}}
 * `first` (optional, on an `after` position): the first record of the range that ended there, when that range began
 * at the trim horizon or a timestamp ([[KinesisSourceOffset.firsts]]); readers that do not know it ignore it.
 * A later version must keep reading every version written before it (golden files in the tests).
 */
private[sparkkinesis] object OffsetJson {
  val Version = 1
  private val mapper = new ObjectMapper()
  private val nodes = JsonNodeFactory.instance

  /** Fields that hold Kinesis sequence numbers (decimal digits). */
  private val Sequence = Set("after", "sequence", "first")

  val Example: String =
    """{"version":1,"streams":{"orders":{"shardId-000000000000":{"after":"49590338271490256608559692538361571095921575989136588898","sub":0,"lastSub":true},"shardId-000000000001":{"start":"trim_horizon"}}}}"""

  def write(offset: KinesisSourceOffset): String = {
    val root = nodes.objectNode()
    root.put("version", Version)
    val streams = root.putObject("streams")
    offset.shards.toSeq.sortBy(_._1).groupBy(_._1.stream).toSeq.sortBy(_._1).foreach { case (stream, entries) =>
      val s = streams.putObject(stream)
      entries.sortBy(_._1).foreach { case (key, position) =>
        val n = s.putObject(key.shardId)
        writePosition(n, position)
        if (position.isInstanceOf[ShardPosition.After]) offset.firsts.get(key).foreach(n.put("first", _))
      }
    }
    mapper.writeValueAsString(root)
  }

  private def writePosition(n: ObjectNode, position: ShardPosition): Unit = position match {
    case ShardPosition.After(RecordPosition(seq, sub, last)) => n.put("after", seq).put("sub", sub).put("lastSub", last)
    case ShardPosition.Ended => n.put("ended", true)
    case ShardPosition.NotStarted(start) => writeStart(n, start)
  }

  private def writeStart(n: ObjectNode, start: StartPosition): Unit = start match {
    case StartPosition.TrimHorizon => n.put("start", "trim_horizon")
    case StartPosition.Latest => n.put("start", "latest")
    case StartPosition.AtTimestamp(ms) => n.put("start", "at_timestamp").put("timestampMs", ms)
    case StartPosition.AtSequence(seq) => n.put("start", "at_sequence").put("sequence", seq)
    case StartPosition.AfterSequence(seq) => n.put("start", "after_sequence").put("sequence", seq)
  }

  /**
   * Reads an offset strictly: every field must be there with the right type, or the read fails with
   * [KINESIS_INVALID_OFFSET] naming `where` (the file or log it came from) and the field. A malformed offset never
   * turns into an empty or partial one, which would read the stream again from its trim horizon.
   */
  def read(json: String, where: String = "the query's offset log"): KinesisSourceOffset =
    try {
      val root = mapper.readTree(json)
      if (root == null || !root.isObject) fail("it is not a JSON object")
      val version = field(root, "version")
      if (!version.isIntegralNumber || version.asInt() < 1) fail("field 'version' must be a positive whole number")
      if (version.asInt() > Version)
        fail(
          s"it was written by a newer spark-kinesis (offset version ${version.asInt()}; this one reads up to $Version)")
      val streams = obj(root, "streams", "'streams'")
      val entries = streams.properties().asScala.toSeq.flatMap { streamEntry =>
        val stream = streamEntry.getKey
        obj(streams, stream, s"stream '$stream'").properties().asScala.map { shardEntry =>
          val at = s"shard '${shardEntry.getKey}' of stream '$stream'"
          val n = obj(streamEntry.getValue, shardEntry.getKey, at)
          val position = readPosition(n, at)
          val first = if (n.has("first") && position.isInstanceOf[ShardPosition.After]) Some(text(n, "first", at))
          else None
          (ShardKey(stream, shardEntry.getKey), position, first)
        }
      }
      KinesisSourceOffset(entries.map(e => e._1 -> e._2).toMap,
        entries.collect { case (k, _, Some(f)) => k -> f }.toMap)
    } catch {
      case e: OffsetFormatException => throw KinesisErrors.badOffset(where, json, e.getMessage, Example)
      case NonFatal(e) => throw KinesisErrors.badOffset(where, json, e.getMessage, Example)
    }

  private final class OffsetFormatException(message: String) extends Exception(message)
  private def fail(why: String): Nothing = throw new OffsetFormatException(why)

  private def field(n: JsonNode, name: String, at: String = "the offset"): JsonNode =
    Option(n.get(name)).getOrElse(fail(s"field '$name' is missing (in $at)"))

  private def obj(n: JsonNode, name: String, what: String): JsonNode = {
    val v = field(n, name)
    if (!v.isObject) fail(s"$what must be a JSON object")
    v
  }

  private def readPosition(n: JsonNode, at: String): ShardPosition =
    if (n.has("after"))
      ShardPosition.After(RecordPosition(text(n, "after", at), long(n, "sub", at), bool(n, "lastSub", at)))
    else if (n.has("ended")) {
      if (!bool(n, "ended", at)) fail(s"field 'ended' must be true (in $at)")
      ShardPosition.Ended
    } else ShardPosition.NotStarted(text(n, "start", at) match {
      case "trim_horizon" => StartPosition.TrimHorizon
      case "latest" => StartPosition.Latest
      case "at_timestamp" => StartPosition.AtTimestamp(long(n, "timestampMs", at))
      case "at_sequence" => StartPosition.AtSequence(text(n, "sequence", at))
      case "after_sequence" => StartPosition.AfterSequence(text(n, "sequence", at))
      case other => fail(s"unknown start '$other' for $at")
    })

  private def long(n: JsonNode, name: String, at: String): Long = {
    val v = field(n, name, at)
    if (!v.isIntegralNumber || !v.canConvertToLong || v.asLong() < 0)
      fail(s"field '$name' must be a whole number of at least 0 (in $at)")
    v.asLong()
  }

  private def bool(n: JsonNode, name: String, at: String): Boolean = {
    val v = field(n, name, at)
    if (!v.isBoolean) fail(s"field '$name' must be true or false (in $at)")
    v.asBoolean()
  }

  private def text(n: JsonNode, name: String, at: String): String = {
    val v = field(n, name, at)
    if (!v.isTextual || v.asText().isEmpty) fail(s"field '$name' must be a non-empty string (in $at)")
    if (Sequence.contains(name) && !v.asText().forall(_.isDigit))
      fail(s"field '$name' must be a sequence number (in $at)")
    v.asText()
  }

}
