package io.sparkkinesis.offsets

import org.scalatest.funsuite.AnyFunSuite

import io.sparkkinesis.errors.KinesisException

/**
 * The awslabs connector's offsets, built from the format its offset classes publish (an offset-log entry with
 * `metadata` and one object per shard; a shard file per shard and batch), read as this connector's positions.
 */
class AwslabsOffsetJsonSuite extends AnyFunSuite {
  private val seq1 = "49605240428222307037115827613554798409561082419642105874"
  private val seq0 = "49605240428200006291917297020490128157480794051565322242"

  private val entry =
    s"""{"shardId-000000000001":{"iteratorType":"AFTER_SEQUENCE_NUMBER","iteratorPosition":"$seq1",
      |"subSequenceNumber":"-1","isLast":"true"},
      |"metadata":{"streamName":"my.cool.stream2","batchId":"7"},
      |"shardId-000000000000":{"iteratorType":"AFTER_SEQUENCE_NUMBER","iteratorPosition":"$seq0",
      |"subSequenceNumber":"1","isLast":"false"},
      |"shardId-000000000002":{"iteratorType":"TRIM_HORIZON","iteratorPosition":"","subSequenceNumber":"-1",
      |"isLast":"true"}}""".stripMargin

  test("their offset-log entry: batch, stream, and every shard's position") {
    assert(AwslabsOffsetJson.isTheirs(entry))
    assert(!AwslabsOffsetJson.isTheirs(OffsetJson.Example))
    assert(!AwslabsOffsetJson.isTheirs("not json"))
    val read = AwslabsOffsetJson.readEntry(entry, "the log")
    assert(read.batchId == 7L && read.stream == "my.cool.stream2")
    assert(read.shards.keySet == Set("shardId-000000000000", "shardId-000000000001", "shardId-000000000002"))
    assert(read.shards("shardId-000000000000") == AwslabsOffsetJson.Position("AFTER_SEQUENCE_NUMBER", seq0, 1, false))
  }

  test("their positions as this connector's: after a plain record, inside an aggregate, at a start, ended") {
    def pos(kind: String, arg: String, sub: Long = -1, last: Boolean = true) =
      AwslabsOffsetJson.toShardPosition(AwslabsOffsetJson.Position(kind, arg, sub, last), 1234L)
    assert(pos("AFTER_SEQUENCE_NUMBER", seq1) == ShardPosition.After(RecordPosition(seq1, 0, lastInAggregate = true)))
    assert(pos("AFTER_SEQUENCE_NUMBER", seq0, 1, last = false) ==
      ShardPosition.After(RecordPosition(seq0, 1, lastInAggregate = false)))
    assert(pos("AFTER_SEQUENCE_NUMBER", seq0, 4) == ShardPosition.After(RecordPosition(seq0, 4,
        lastInAggregate = true)))
    assert(pos("AT_SEQUENCE_NUMBER", seq0) == ShardPosition.NotStarted(StartPosition.AtSequence(seq0)))
    assert(pos("AT_SEQUENCE_NUMBER", seq0, 2) == ShardPosition.After(RecordPosition(seq0, 1, lastInAggregate = false)))
    assert(pos("TRIM_HORIZON", "") == ShardPosition.NotStarted(StartPosition.TrimHorizon))
    assert(pos("AT_TIMESTAMP", "1700000000000") == ShardPosition.NotStarted(StartPosition.AtTimestamp(1700000000000L)))
    assert(pos("LATEST", "") == ShardPosition.NotStarted(StartPosition.AtTimestamp(1234L)))
    assert(pos("SHARD_END", "") == ShardPosition.Ended)
  }

  test("a shard file, with numbers and booleans as JSON values") {
    val file = s"""{"shardId":"shardId-000000000000","iteratorType":"AFTER_SEQUENCE_NUMBER",
      |"iteratorPosition":"$seq0","subSequenceNumber":-1,"isLast":true}""".stripMargin
    assert(AwslabsOffsetJson.readShardFile(file, "f") ==
      ("shardId-000000000000" -> AwslabsOffsetJson.Position("AFTER_SEQUENCE_NUMBER", seq0, -1, true)))
  }

  test("a damaged entry fails with [KINESIS_INVALID_OFFSET] naming where and what, never reads as empty") {
    val noBatch = intercept[KinesisException](AwslabsOffsetJson.readEntry("""{"metadata":{"streamName":"s"}}""",
        "the offset log /c/offsets"))
    assert(noBatch.getMessage.startsWith("[KINESIS_INVALID_OFFSET] Cannot read the Kinesis offset in the offset log " +
        "/c/offsets: field 'batchId' is missing (in metadata) (an awslabs offset)"))
    val badType = intercept[KinesisException](AwslabsOffsetJson.readEntry(
        """{"metadata":{"streamName":"s","batchId":"1"},"shardId-0":{"iteratorType":"SOMEWHERE"}}""", "x"))
    assert(badType.getMessage.contains("unknown iteratorType 'SOMEWHERE'"))
    val badSeq = intercept[KinesisException](AwslabsOffsetJson.readEntry(
        """{"metadata":{"streamName":"s","batchId":"1"},"shardId-0":{"iteratorType":"AFTER_SEQUENCE_NUMBER",""" +
          """"iteratorPosition":""}}""", "x"))
    assert(badSeq.getMessage.contains("'iteratorPosition' must be digits"))
  }
}
