package io.sparkkinesis.testing

import io.sparkkinesis.testing.TestStreams._

/**
 * The resharding the trigger x fetch mode x reshard matrix runs (docs/testing.md, "Resharding matrix"): a stream of
 * two shards; shard 0 split, then one of its children merged with shard 1, then (`updateShardCount`) the open shards
 * scaled to three with UpdateShardCount; records put before each step, so every closed shard holds records. Each
 * record is `(partition key, "id")` over `keys` keys, so per key the ids must come in increasing order.
 */
object Resharding {
  val Keys = 12

  def records(from: Int, until: Int): Seq[(String, String)] = (from until until).map(i => s"k${i % Keys}" -> s"$i")

  /** The stream's open shards (no ending sequence number), by id. */
  def openShards(server: LocalKinesisServer, stream: String): Seq[String] =
    shards(server, stream).filter(_.sequenceNumberRange().endingSequenceNumber() == null).map(_.shardId())

  /**
   * Splits the stream's first open shard, puts `parts(1)`, merges the split's upper child with the open shard after
   * it, puts `parts(2)`, and with `updateShardCount` scales to three open shards and puts `parts(3)`. `parts`: id
   * ranges, the first of them put before by the caller.
   */
  def reshard(server: LocalKinesisServer, stream: String, parts: Seq[Range], updateShardCount: Boolean): Unit = {
    val before = shards(server, stream).map(_.shardId()).toSet
    split(server, stream, openShards(server, stream).head)
    put(server, stream, records(parts(1).start, parts(1).end))
    // The child next to the open shard that was there before: the one whose hash keys end where the other's begin.
    val listed = shards(server, stream)
    val neighbour =
      listed.find(s => before.contains(s.shardId()) && openShards(server, stream).contains(s.shardId())).get
    val start = BigInt(neighbour.hashKeyRange().startingHashKey())
    val child = listed.find(s => !before.contains(s.shardId()) && BigInt(s.hashKeyRange().endingHashKey()) + 1 == start)
      .getOrElse(sys.error(s"no child of the split is adjacent to ${neighbour.shardId()}"))
    merge(server, stream, child.shardId(), neighbour.shardId())
    put(server, stream, records(parts(2).start, parts(2).end))
    if (updateShardCount) {
      val client = syncClient(server)
      client.updateShardCount(software.amazon.awssdk.services.kinesis.model.UpdateShardCountRequest.builder()
          .streamName(stream).targetShardCount(3).scalingType("UNIFORM_SCALING").build())
      awaitActive(server, stream)
      put(server, stream, records(parts(3).start, parts(3).end))
    }
  }

  /** Shard id -> its parents, from ListShards. */
  def parents(server: LocalKinesisServer, stream: String): Map[String, Seq[String]] =
    shards(server, stream).map(s =>
      s.shardId() -> Seq(Option(s.parentShardId()), Option(s.adjacentParentShardId()))
        .flatten).toMap

  /**
   * What is wrong with rows read (batch id, id, partition key, shard id, in the order they were delivered): ids
   * missing or repeated against `expected`, a key whose ids go back, and (`childrenLater`) a child shard's rows in a
   * batch before, or the same as, its parent's last. Empty when nothing is.
   */
  def problems(
      rows: Seq[(Long, String, String, String)],
      expected: Seq[Int],
      lineage: Map[String, Seq[String]],
      childrenLater: Boolean): Seq[String] = {
    val ids = rows.map(_._2.toInt)
    val missing = expected.toSet -- ids
    val repeated = ids.groupBy(identity).collect { case (i, n) if n.size > 1 => i }
    val extra = ids.toSet -- expected
    val disorder = rows.groupBy(_._3).collect {
      case (k, rs) if rs.map(_._2.toInt) != rs.map(_._2.toInt).sorted => s"$k: ${rs.map(_._2).mkString(",")}"
    }
    val byShard = rows.groupBy(_._4).map { case (s, rs) => s -> rs.map(_._1) }
    val early = for {
      (child, ps) <- lineage.toSeq
      childBatches <- byShard.get(child).toSeq
      p <- ps
      parentBatches <- byShard.get(p).toSeq
      if (if (childrenLater) childBatches.min <= parentBatches.max else childBatches.min < parentBatches.max)
    } yield s"child $child read in batch ${childBatches.min}, its parent $p up to batch ${parentBatches.max}"
    Seq(
      if (missing.nonEmpty) Some(s"${missing.size} ids missing, e.g. ${missing.toSeq.sorted.take(10)}") else None,
      if (repeated.nonEmpty) Some(s"${repeated.size} ids read twice, e.g. ${repeated.toSeq.sorted.take(10)}") else None,
      if (extra.nonEmpty) Some(s"${extra.size} ids not expected, e.g. ${extra.toSeq.sorted.take(10)}") else None,
      if (disorder.nonEmpty) Some(s"keys out of order: ${disorder.take(3).mkString("; ")}") else None,
      if (early.nonEmpty) Some(s"lineage: ${early.mkString("; ")}") else None
    ).flatten
  }
}
