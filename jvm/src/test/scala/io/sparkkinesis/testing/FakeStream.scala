package io.sparkkinesis.testing

import scala.collection.mutable.ArrayBuffer

/**
 * One shard of a [[FakeStream]], held in memory: its records (partition key, data, arrival time) and its place in
 * the stream's lineage. Sequence numbers are computed, not stored: `49`, the shard's number (20 digits) and the
 * record's index (20 digits), so they grow within a shard and name the shard they belong to. A closed shard keeps
 * its records and takes no more.
 */
final class FakeShard(
    val number: Int,
    val parent: Option[String],
    val adjacentParent: Option[String],
    val hashStart: BigInt,
    val hashEnd: BigInt) {
  val id: String = f"shardId-$number%012d"

  private val keys = ArrayBuffer.empty[String]
  private val data = ArrayBuffer.empty[Array[Byte]]
  private val arrivals = ArrayBuffer.empty[Long]
  @volatile private var closedAt: Option[Long] = None

  def closed: Boolean = closedAt.isDefined

  /**
   * The sequence number of record `index`; `sequenceNumber(-1)`, before the first record, is the position an
   * enhanced fan-out event names as its continuation when nothing was read yet.
   */
  def sequenceNumber(index: Long): String = (FakeShard.Base + BigInt(number) * FakeShard.Radix + index + 1).toString

  /** The record index a sequence number of this shard stands for (-1: before the first); None when not this shard's. */
  def indexOf(sequenceNumber: String): Option[Long] =
    scala.util.Try(BigInt(sequenceNumber)).toOption.map(_ - FakeShard.Base).filter(_ >= 0)
      .filter(n => n / FakeShard.Radix == number).map(n => (n % FakeShard.Radix).toLong - 1)

  def startingSequenceNumber: String = sequenceNumber(0)

  /** The last sequence number the shard could have had: set once it is closed. */
  def endingSequenceNumber: Option[String] = closedAt.map(_ => sequenceNumber(FakeShard.Radix.toLong - 2))

  /** Appends a record and returns its index. */
  def append(key: String, bytes: Array[Byte], arrivalMillis: Long): Long = synchronized {
    require(!closed, s"$id is closed")
    keys += key
    data += bytes
    arrivals += arrivalMillis
    keys.size - 1L
  }

  def close(nowMillis: Long): Unit = synchronized { closedAt = Some(nowMillis) }

  def size: Long = synchronized(keys.size.toLong)

  /** Records from `from` (index), at most `limit`: (index, key, data, arrival) each. */
  def slice(from: Long, limit: Int): (Seq[(Long, String, Array[Byte], Long)], Long) = synchronized {
    val start = math.min(from, keys.size.toLong).toInt
    val end = math.min(keys.size.toLong, start.toLong + limit).toInt
    ((start until end).map(i => (i.toLong, keys(i), data(i), arrivals(i))), keys.size.toLong)
  }

  def arrival(index: Long): Long = synchronized(arrivals(index.toInt))

  /** The index of the first record that arrived at or after `millis` (the shard's size when none did). */
  def firstAtOrAfter(millis: Long): Long = synchronized {
    val i = arrivals.indexWhere(_ >= millis)
    if (i < 0) keys.size.toLong else i.toLong
  }

  def contains(hash: BigInt): Boolean = hash >= hashStart && hash <= hashEnd
}

object FakeShard {
  val Radix: BigInt = BigInt(10).pow(20)
  val Base: BigInt = BigInt(49) * Radix * Radix
  val MaxHashKey: BigInt = BigInt(2).pow(128) - 1
}

/**
 * A stream of the fake service: its shards in the order they were made (the order ListShards gives), the open ones
 * sorted by hash key for routing puts, and resharding (split, merge, and UpdateShardCount to twice or half the open
 * shards, which Kinesis does as splits and merges too).
 */
final class FakeStream(val name: String, shardCount: Int, nowMillis: => Long) {
  val arn: String = s"arn:aws:kinesis:us-east-1:000000000000:stream/$name"
  val createdMillis: Long = nowMillis

  private val all = ArrayBuffer.empty[FakeShard]
  private var byId = Map.empty[String, FakeShard]
  @volatile private var open: IndexedSeq[FakeShard] = IndexedSeq.empty

  locally {
    val width = (FakeShard.MaxHashKey + 1) / shardCount
    (0 until shardCount).foreach { i =>
      val end = if (i == shardCount - 1) FakeShard.MaxHashKey else width * (i + 1) - 1
      add(None, None, width * i, end)
    }
    reindex()
  }

  private def add(parent: Option[String], adjacent: Option[String], start: BigInt, end: BigInt): FakeShard = {
    val shard = new FakeShard(all.size, parent, adjacent, start, end)
    all += shard
    byId += shard.id -> shard
    shard
  }

  private def reindex(): Unit = open = all.filterNot(_.closed).sortBy(_.hashStart).toIndexedSeq

  def shards: IndexedSeq[FakeShard] = synchronized(all.toIndexedSeq)

  def openShards: IndexedSeq[FakeShard] = open

  def shard(id: String): Option[FakeShard] = synchronized(byId.get(id))

  /** The open shard whose hash key range holds `hash` (binary search). */
  def route(hash: BigInt): FakeShard = {
    val shards = open
    var lo = 0
    var hi = shards.size - 1
    while (lo < hi) {
      val mid = (lo + hi + 1) / 2
      if (shards(mid).hashStart <= hash) lo = mid else hi = mid - 1
    }
    shards(lo)
  }

  /** Closes `id` and opens two children, the upper one starting at `newStartingHashKey`. */
  def split(id: String, newStartingHashKey: BigInt): Seq[FakeShard] = synchronized {
    val parent = byId.getOrElse(id, throw new NoSuchElementException(id))
    require(!parent.closed && newStartingHashKey > parent.hashStart && newStartingHashKey <= parent.hashEnd,
      s"cannot split $id at $newStartingHashKey")
    parent.close(nowMillis)
    val children = Seq(add(Some(id), None, parent.hashStart, newStartingHashKey - 1),
      add(Some(id), None, newStartingHashKey, parent.hashEnd))
    reindex()
    children
  }

  /** Closes two adjacent open shards and opens one child over both ranges. */
  def merge(id: String, adjacentId: String): FakeShard = synchronized {
    val a = byId.getOrElse(id, throw new NoSuchElementException(id))
    val b = byId.getOrElse(adjacentId, throw new NoSuchElementException(adjacentId))
    require(!a.closed && !b.closed && (a.hashEnd + 1 == b.hashStart || b.hashEnd + 1 == a.hashStart),
      s"$id and $adjacentId are not adjacent open shards")
    a.close(nowMillis)
    b.close(nowMillis)
    val child = add(Some(id), Some(adjacentId), a.hashStart.min(b.hashStart), a.hashEnd.max(b.hashEnd))
    reindex()
    child
  }

  /** UpdateShardCount to twice the open shards (each split in half) or half of them (neighbours merged). */
  def scaleTo(target: Int): Unit = synchronized {
    val now = open
    if (target == now.size * 2) now.foreach(s => split(s.id, (s.hashStart + s.hashEnd + 1) / 2))
    else if (target * 2 == now.size) now.grouped(2).foreach(p => merge(p(0).id, p(1).id))
    else throw new UnsupportedOperationException(s"the fake scales ${now.size} shards to twice or half, not $target")
  }
}
