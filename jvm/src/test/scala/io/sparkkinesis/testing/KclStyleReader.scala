package io.sparkkinesis.testing

import java.nio.charset.StandardCharsets
import java.security.MessageDigest

import io.sparkkinesis.kpl.Kpl

/** A user record as a consumer gets it: from the shard it was read in, with its own partition key. */
final case class UserRecordRead(shardId: String, partitionKey: String, data: Array[Byte]) {
  def text: String = new String(data, StandardCharsets.UTF_8)
}

/**
 * Reads a stream back the way the KCL does with de-aggregation on: every shard from TRIM_HORIZON, a shard only after
 * its parents (so, per key, in the order a consumer that follows the lineage sees records); each KPL aggregate
 * de-aggregated; and a user record of an aggregate whose hash key (its explicit hash key, else the MD5 of its
 * partition key) lies outside the hash range of the shard it was read from dropped, as the KCL drops it. A plain
 * record is kept: Kinesis put it in its own shard. [[allCopies]] is the same read without dropping anything.
 */
object KclStyleReader {

  /** What a range-filtering consumer keeps, parents' shards before their children's. */
  def read(server: LocalKinesisServer, stream: String): Seq[UserRecordRead] =
    records(server, stream, inRangeOnly = true)

  /** Every user record of every aggregate, misplaced ones included (what a consumer that does not filter sees). */
  def allCopies(server: LocalKinesisServer, stream: String): Seq[UserRecordRead] =
    records(server, stream, inRangeOnly = false)

  private def records(server: LocalKinesisServer, stream: String, inRangeOnly: Boolean): Seq[UserRecordRead] = {
    val shards = TestStreams.shards(server, stream)
    val ranges = shards.map { s =>
      s.shardId() -> ((BigInt(s.hashKeyRange().startingHashKey()), BigInt(s.hashKeyRange().endingHashKey())))
    }.toMap
    val byShard = TestStreams.readAll(server, stream).groupBy(_.shardId)
    lineageOrder(shards.map(s =>
        s.shardId() -> Seq(Option(s.parentShardId()), Option(s.adjacentParentShardId()))
          .flatten)).flatMap { shard =>
      val (low, high) = ranges(shard)
      byShard.getOrElse(shard, Nil).flatMap { r =>
        Kpl.deaggregate(r.data, r.partitionKey) match {
          case Some(users) =>
            users.filter { u =>
              val hash = u.explicitHashKey.map(BigInt(_)).getOrElse(md5(u.partitionKey))
              !inRangeOnly || (hash >= low && hash <= high)
            }.map(u => UserRecordRead(shard, u.partitionKey, u.data))
          case None => Seq(UserRecordRead(shard, r.partitionKey, r.data))
        }
      }
    }
  }

  /** Shard ids, each after its parents (those still listed), otherwise by id. */
  def lineageOrder(parents: Seq[(String, Seq[String])]): Seq[String] = {
    val listed = parents.map(_._1).toSet
    val waiting = scala.collection.mutable.LinkedHashMap(parents.sortBy(_._1): _*)
    val out = Seq.newBuilder[String]
    val done = scala.collection.mutable.HashSet.empty[String]
    while (waiting.nonEmpty) {
      val ready = waiting.collectFirst { case (s, ps) if ps.forall(p => done(p) || !listed(p)) => s }
        .getOrElse(sys.error(s"the shards' parents form a cycle: $waiting"))
      waiting -= ready
      done += ready
      out += ready
    }
    out.result()
  }

  private def md5(partitionKey: String): BigInt =
    BigInt(1, MessageDigest.getInstance("MD5").digest(partitionKey.getBytes(StandardCharsets.UTF_8)))
}
