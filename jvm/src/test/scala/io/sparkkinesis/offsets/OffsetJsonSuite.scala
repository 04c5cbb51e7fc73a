package io.sparkkinesis.offsets

import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Paths}

import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.errors.KinesisException

class OffsetJsonSuite extends AnyFunSuite {

  private def golden(name: String): String =
    new String(Files.readAllBytes(Paths.get(s"jvm/src/test/resources/offsets/$name")), StandardCharsets.UTF_8).trim

  /** What the golden file (written by hand in the version-1 format) means. */
  private val expected = KinesisSourceOffset(Map(
      ShardKey("orders", "shardId-000000000000") -> ShardPosition.After(
        RecordPosition("49590338271490256608559692538361571095921575989136588898", 0, lastInAggregate = true)),
      ShardKey("orders", "shardId-000000000001") -> ShardPosition.After(
        RecordPosition("49590338271512557353758223161503106814194224337498505234", 3, lastInAggregate = false)),
      ShardKey("orders", "shardId-000000000002") -> ShardPosition.NotStarted(StartPosition.TrimHorizon),
      ShardKey("orders", "shardId-000000000003") -> ShardPosition.NotStarted(
        StartPosition.AtSequence("49590338271534858098956753784644642532466872685860421650")),
      ShardKey("orders", "shardId-000000000004") -> ShardPosition.NotStarted(
        StartPosition.AfterSequence("49590338271534858098956753784644642532466872685860421651")),
      ShardKey("clicks", "shardId-000000000000") -> ShardPosition.Ended,
      ShardKey("clicks", "shardId-000000000002") -> ShardPosition.NotStarted(
        StartPosition.AtTimestamp(1769860800000L))))

  test("version-1 checkpoints written today stay readable") {
    assert(OffsetJson.read(golden("v1-all-positions.json")) == expected)
  }

  test("writing is deterministic: sorted streams and shards, byte for byte the version-1 format") {
    assert(expected.json() == golden("v1-all-positions.json"))
    val shuffled = KinesisSourceOffset(scala.util.Random.shuffle(expected.shards.toSeq).toMap)
    assert(shuffled.json() == expected.json())
  }

  test("the first record of a range begun at trim horizon is kept on its end, only on 'after' positions") {
    val started = ShardKey("orders", "shardId-000000000000")
    val waiting = ShardKey("orders", "shardId-000000000002")
    val pinned = expected.copy(firsts = Map(started -> "49590338271490256608559692538361571095921575989136588800"))
    val json = pinned.json()
    assert(json.contains(""""lastSub":true,"first":"49590338271490256608559692538361571095921575989136588800"}"""),
      json)
    assert(OffsetJson.read(json) == pinned)
    // Older readers ignore the field: without it the offset is the same positions, as before.
    assert(OffsetJson.read(json).shards == expected.shards)
    // A first on a position that is not 'after' means nothing and is not written.
    assert(expected.copy(firsts = Map(waiting -> "1")).json() == expected.json())
    val e = intercept[KinesisException](OffsetJson.read(json.replace("588800", "5888x0")))
    assert(e.getMessage.contains("field 'first' must be a sequence number"), e.getMessage)
  }

  test("pinning keeps the first record only for shards whose range began at a position not tied to a record") {
    val fromTrimHorizon = ShardKey("orders", "shardId-000000000002")
    val fromSequence = ShardKey("orders", "shardId-000000000003")
    val alreadyAfter = ShardKey("orders", "shardId-000000000000")
    val end = KinesisSourceOffset(expected.shards ++ Seq(
      fromTrimHorizon -> ShardPosition.After(RecordPosition("20", 0, lastInAggregate = true)),
      fromSequence -> ShardPosition.After(RecordPosition("30", 0, lastInAggregate = true)),
      alreadyAfter -> ShardPosition.After(RecordPosition("99999999999999999999999999999999999999999999999999999999", 0,
          lastInAggregate = true))))
    val firsts = Map(fromTrimHorizon -> "11", fromSequence -> "21", alreadyAfter -> "12")
    assert(end.pinningFirsts(expected, firsts.get).firsts == Map(fromTrimHorizon -> "11"))
    // The same from a map built once from a round's reports (a lookup per shard, not a search).
    assert(end.pinningFirstsOf(expected, firsts).firsts == Map(fromTrimHorizon -> "11"))
  }

  test("round trip of random offsets") {
    val rnd = new scala.util.Random(3)
    (1 to 200).foreach { _ =>
      val shards = (0 until rnd.nextInt(20)).map { i =>
        val seq = BigInt(180, rnd).toString
        ShardKey(s"s${rnd.nextInt(3)}", f"shardId-$i%012d") -> (rnd.nextInt(4) match {
          case 0 => ShardPosition.After(RecordPosition(seq, rnd.nextInt(1000).toLong, rnd.nextBoolean()))
          case 1 => ShardPosition.Ended
          case 2 => ShardPosition.NotStarted(StartPosition.AtTimestamp(rnd.nextLong().abs))
          case _ => ShardPosition.NotStarted(StartPosition.TrimHorizon)
        })
      }.toMap
      val offset = KinesisSourceOffset(shards)
      assert(OffsetJson.read(offset.json()) == offset)
    }
  }

  test("unreadable offsets fail with the reason and a valid example") {
    Seq(
      "not json" -> "Cannot read the Kinesis offset",
      """{"streams":{}}""" -> "'version' is missing",
      """{"version":2,"streams":{}}""" -> "newer spark-kinesis",
      """{"version":1,"streams":{"s":{"shardId-0":{"start":"nowhere"}}}}""" -> "unknown start 'nowhere'",
      """{"version":1,"streams":{"s":{"shardId-0":{"after":"","sub":0,"lastSub":true}}}}""" -> "'after' must be a non-empty string"
    ).foreach { case (json, why) =>
      val e = intercept[KinesisException](OffsetJson.read(json))
      assert(e.getMessage.startsWith("[KINESIS_INVALID_OFFSET]"), json)
      assert(e.getMessage.contains(why), e.getMessage)
      assert(e.getMessage.contains(OffsetJson.Example))
    }
  }

  test("malformed offsets fail strictly, naming where they came from and the field, never reading as empty") {
    val shard = """"shardId-0":{"after":"5","sub":0,"lastSub":true}"""
    Seq(
      """{"version":1,"streams":[]}""" -> "'streams' must be a JSON object",
      """{"version":1,"streams":{"s":5}}""" -> "stream 's' must be a JSON object",
      """{"version":1,"streams":{"s":[]}}""" -> "stream 's' must be a JSON object",
      """{"version":1,"streams":{"s":{"shardId-0":"5"}}}""" -> "shard 'shardId-0' of stream 's' must be a JSON object",
      """{"version":1,"streams":{"s":{"shardId-0":{"after":"5","sub":"abc","lastSub":true}}}}""" ->
        "field 'sub' must be a whole number of at least 0 (in shard 'shardId-0' of stream 's')",
      """{"version":1,"streams":{"s":{"shardId-0":{"after":"5","sub":-1,"lastSub":true}}}}""" -> "field 'sub'",
      """{"version":1,"streams":{"s":{"shardId-0":{"after":"5","sub":0,"lastSub":"yes"}}}}""" ->
        "field 'lastSub' must be true or false",
      """{"version":1,"streams":{"s":{"shardId-0":{"after":"5","sub":0}}}}""" -> "field 'lastSub' is missing",
      """{"version":1,"streams":{"s":{"shardId-0":{"after":"x5","sub":0,"lastSub":true}}}}""" ->
        "field 'after' must be a sequence number",
      """{"version":1,"streams":{"s":{"shardId-0":{"start":"at_timestamp","timestampMs":"soon"}}}}""" ->
        "field 'timestampMs' must be a whole number",
      """{"version":1,"streams":{"s":{"shardId-0":{"ended":false}}}}""" -> "field 'ended' must be true",
      """{"version":"1","streams":{"s":{""" + shard + """}}}""" -> "field 'version' must be a positive whole number",
      """{"version":1.5,"streams":{}}""" -> "field 'version' must be a positive whole number"
    ).foreach { case (json, why) =>
      val e = intercept[KinesisException](OffsetJson.read(json, "the initial offset file /cp/sources/0/x.json"))
      assert(e.condition == "KINESIS_INVALID_OFFSET", json)
      assert(e.getMessage.contains(why), e.getMessage)
      assert(e.getMessage.contains("in the initial offset file /cp/sources/0/x.json"), e.getMessage)
    }
    // Well-formed offsets of every shape still read.
    assert(OffsetJson.read("""{"version":1,"streams":{"s":{""" + shard + """}}}""").shards.size == 1)
    assert(OffsetJson.read("""{"version":1,"streams":{}}""").shards.isEmpty)
  }
}
