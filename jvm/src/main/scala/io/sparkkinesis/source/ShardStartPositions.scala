package io.sparkkinesis.source

import io.sparkkinesis.compat.CollectionConverters._
import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}

import io.sparkkinesis.errors.KinesisErrors
import io.sparkkinesis.offsets.{ShardKey, StartPosition}

/**
 * The `initialShardPositions` option: where a new query starts in chosen shards, by sequence number, for example
 * to take over from another consumer's checkpoint. Shards it does not name start at `initialPosition`.
 * {{{
 * {"orders": {"shardId-000000000000": "49590338271490256608559692538361571095921575989136588898",
 *             "shardId-000000000001": {"at": "49590338271490256608559692538361571095921575989136588899"}}}
 * }}}
 * A plain sequence number starts after that record (it was the last one processed); `{"at": ...}` starts with it.
 */
private[sparkkinesis] final case class ShardStartPositions(byShard: Map[ShardKey, StartPosition]) {
  def get(key: ShardKey): Option[StartPosition] = byShard.get(key)

  /** Fails, naming them, when positions are given for shards the streams do not have. */
  def checkKnown(listed: Set[ShardKey]): Unit = {
    val unknown = byShard.keySet.diff(listed).toSeq.sorted
    if (unknown.nonEmpty)
      throw KinesisErrors.invalidOptionValue(ShardStartPositions.OptionName,
        unknown.map(k => s"${k.stream}/${k.shardId}").mkString(", "),
        "positions of shards the stream has; these shards were not found (ListShards lists the stream's shards)")
  }
}

private[sparkkinesis] object ShardStartPositions {
  val OptionName = "initialShardPositions"
  val Empty: ShardStartPositions = ShardStartPositions(Map.empty)
  val Example: String =
    """{"orders":{"shardId-000000000000":"49590338271490256608559692538361571095921575989136588898"}}"""

  private val mapper = new ObjectMapper()
  private val SequenceNumber = "[0-9]{1,128}".r

  def parse(json: String, streams: Set[String]): ShardStartPositions = {
    def bad(why: String) = KinesisErrors.invalidOptionValue(OptionName, json.take(300),
      s"a JSON object of stream names to objects of shard ids to sequence numbers ($why), for example $Example")
    val root: JsonNode =
      try mapper.readTree(json)
      catch { case NonFatal(_) => null }
    if (root == null || !root.isObject) throw bad("it is not a JSON object")
    val entries = root.properties().asScala.toSeq.flatMap { stream =>
      if (!streams.contains(stream.getKey))
        throw bad(s"'${stream.getKey}' is not one of the streams read: ${streams.toSeq.sorted.mkString(", ")}")
      if (!stream.getValue.isObject) throw bad(s"the value for stream '${stream.getKey}' is not an object")
      stream.getValue.properties().asScala.toSeq.map { shard =>
        val key = ShardKey(stream.getKey, shard.getKey)
        val value = shard.getValue
        val position = value match {
          case v if v.isTextual => sequence(v.asText()).map(StartPosition.AfterSequence)
          case v if v.isObject && v.size() == 1 && v.has("at") && v.get("at").isTextual =>
            sequence(v.get("at").asText()).map(StartPosition.AtSequence)
          case _ => None
        }
        key -> position.getOrElse(throw bad(s"the position of ${shard.getKey} is neither a sequence number " +
            "(a string of digits) nor {\"at\": sequence number}"))
      }
    }
    ShardStartPositions(entries.toMap)
  }

  private def sequence(text: String): Option[String] = text match {
    case SequenceNumber() => Some(text)
    case _ => None
  }
}
