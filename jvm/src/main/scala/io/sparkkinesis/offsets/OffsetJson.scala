package io.sparkkinesis.offsets

import scala.jdk.CollectionConverters._
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
 *   "shardId-000000000004":{"ended":true}}}}
 * }}}
 * A later version must keep reading every version written before it (golden files in the tests).
 */
private[sparkkinesis] object OffsetJson {
  val Version = 1
  private val mapper = new ObjectMapper()
  private val nodes = JsonNodeFactory.instance

  val Example: String =
    """{"version":1,"streams":{"orders":{"shardId-000000000000":{"after":"49590338271490256608559692538361571095921575989136588898","sub":0,"lastSub":true},"shardId-000000000001":{"start":"trim_horizon"}}}}"""

  def write(offset: KinesisSourceOffset): String = {
    val root = nodes.objectNode()
    root.put("version", Version)
    val streams = root.putObject("streams")
    offset.shards.toSeq.sortBy(_._1).groupBy(_._1.stream).toSeq.sortBy(_._1).foreach { case (stream, entries) =>
      val s = streams.putObject(stream)
      entries.sortBy(_._1).foreach { case (key, position) => writePosition(s.putObject(key.shardId), position) }
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

  def read(json: String): KinesisSourceOffset =
    try {
      val root = mapper.readTree(json)
      if (root == null || !root.isObject) fail("it is not a JSON object")
      val version = field(root, "version").asInt(-1)
      if (version < 1) fail("'version' is missing or not a positive number")
      if (version > Version)
        fail(s"it was written by a newer spark-kinesis (offset version $version; this one reads up to $Version)")
      val streams = field(root, "streams")
      val shards = streams.properties().asScala.flatMap { streamEntry =>
        streamEntry.getValue.properties().asScala.map { shardEntry =>
          ShardKey(streamEntry.getKey, shardEntry.getKey) -> readPosition(shardEntry.getValue)
        }
      }.toMap
      KinesisSourceOffset(shards)
    } catch {
      case e: OffsetFormatException => throw KinesisErrors.badOffset(json, e.getMessage, Example)
      case NonFatal(e) => throw KinesisErrors.badOffset(json, e.getMessage, Example)
    }

  private final class OffsetFormatException(message: String) extends Exception(message)
  private def fail(why: String): Nothing = throw new OffsetFormatException(why)

  private def field(n: JsonNode, name: String): JsonNode =
    Option(n.get(name)).getOrElse(fail(s"field '$name' is missing"))

  private def readPosition(n: JsonNode): ShardPosition =
    if (n.has("after"))
      ShardPosition.After(RecordPosition(text(n, "after"), field(n, "sub").asLong(), field(n, "lastSub").asBoolean()))
    else if (n.has("ended")) ShardPosition.Ended
    else ShardPosition.NotStarted(text(n, "start") match {
      case "trim_horizon" => StartPosition.TrimHorizon
      case "latest" => StartPosition.Latest
      case "at_timestamp" => StartPosition.AtTimestamp(field(n, "timestampMs").asLong())
      case "at_sequence" => StartPosition.AtSequence(text(n, "sequence"))
      case "after_sequence" => StartPosition.AfterSequence(text(n, "sequence"))
      case other => fail(s"unknown start '$other'")
    })

  private def text(n: JsonNode, name: String): String = {
    val v = field(n, name)
    if (!v.isTextual || v.asText().isEmpty) fail(s"field '$name' must be a non-empty string")
    v.asText()
  }
}
