package io.sparkkinesis.writer

import scala.collection.mutable

import io.sparkkinesis.kpl.{Aggregate, KplAggregator, UserRecord}

/**
 * `aggregation=kpl`: packs a writer's records into KPL aggregates, one aggregate in progress per target shard and
 * unit of order ([[KplShardMaps]]), so that every user record of an aggregate belongs to the shard the aggregate
 * lands on (consumers such as the KCL drop sub-records outside the shard's hash range). A record too large for an
 * aggregate is sent on its own, after the open aggregate of its shard. An aggregate leaves when the next record
 * would push it over `maxAggregateBytes` of its stream (`aggregationMaxSize`, never above the stream's record
 * limit), when the held aggregates together pass `maxHeldBytes` (the largest leaves), and at the end of the task.
 * When the stream's map is listed again, [[repackStale]] packs the records of aggregates in progress for shards
 * that closed again by the new map; [[packAlone]] packs records to send again (see [[MisplacedRecords]]).
 */
private[writer] final class KplRecordPacker(
    maps: KplShardMaps,
    maxAggregateBytes: Int => Long,
    maxHeldBytes: Long) {

  private val open = new OpenAggregates(maps, maxAggregateBytes)

  /** Adds one row's record; returns the aggregates it completed. */
  def add(
      stream: Int,
      partitionKey: String,
      explicitHashKey: String,
      data: Array[Byte],
      position: String): Seq[PutEntry] =
    open.add(stream, UserRecord(partitionKey, Option(explicitHashKey), data), position) ++
      (if (open.heldBytes > maxHeldBytes) open.flushLargest() else Nil)

  /** Every aggregate in progress. */
  def flush(): Seq[PutEntry] = open.flushAll()

  /**
   * The aggregates in progress whose unit of order is `free` (by stream and ordering key): with `ordering=perKey`,
   * an aggregate whose unit has one in flight stays open and gathers the records that arrive meanwhile, so they
   * leave together when the unit is free, rather than one small aggregate per flush queued behind each other.
   */
  def flush(free: (Int, String) => Boolean): Seq[PutEntry] =
    open.flushWhere(k => free(k.stream, OpenAggregates.orderingKey(k.unit)))

  /**
   * Packs again, by the stream's map now, the records of the aggregates in progress for shards the map no longer
   * has open, in their order; returns the aggregates that completes.
   */
  def repackStale(stream: Int): Seq[PutEntry] = {
    val map = maps(stream)
    open.take(k => k.stream == stream && !map.isOpen(k.shard)).flatMap { case (records, position) =>
      records.flatMap(r => add(stream, r.partitionKey, r.explicitHashKey.orNull, r.data, position))
    }
  }

  /** `records`, in their order, packed by the stream's map now into aggregates of their own, all complete. */
  def packAlone(stream: Int, records: Seq[UserRecord], position: String): Seq[PutEntry] = {
    val alone = new OpenAggregates(maps, maxAggregateBytes)
    records.flatMap(alone.add(stream, _, position)) ++ alone.flushAll()
  }
}

/** Aggregates in progress, by stream, target shard and unit of order. */
private final class OpenAggregates(maps: KplShardMaps, maxAggregateBytes: Int => Long) {
  import OpenAggregates._

  private val open = mutable.LinkedHashMap.empty[Key, Open]

  def add(stream: Int, record: UserRecord, position: String): Seq[PutEntry] = {
    val route = maps.route(stream, ShardMap.hashKey(record.partitionKey, record.explicitHashKey.orNull))
    val key = Key(stream, route.shard, route.unit)
    val bytes = SinkSchema.recordBytes(record.partitionKey, record.data)
    val maxBytes = maxAggregateBytes(stream)
    if (bytes > maxBytes) {
      // Too large for any aggregate, yet a valid record (the writer checked maxRecordSize): the shard's open
      // aggregate leaves first, then this record on its own, in the same unit of order, so order is kept.
      val before = open.remove(key).toSeq.flatMap(flushed(key, _))
      return before :+ new PutEntry(stream, record.partitionKey, record.explicitHashKey.orNull, record.data, bytes,
        orderingKey(key.unit), 1, position, key.shard)
    }
    val o = open.getOrElseUpdate(key, new Open(new KplAggregator(maxBytes)))
    val done = o.aggregator.add(record)
    val out = done.map(entry(key, _, o.first)).toSeq
    if (o.aggregator.pendingRecords == 1 || done.isDefined) o.first = position
    out
  }

  def flushAll(): Seq[PutEntry] = flushWhere(_ => true)

  def flushWhere(which: Key => Boolean): Seq[PutEntry] = {
    val leaving = open.filter(e => which(e._1)).toVector
    open --= leaving.map(_._1)
    leaving.flatMap { case (key, o) => flushed(key, o) }
  }

  def heldBytes: Long = open.valuesIterator.map(_.aggregator.pendingBytes).sum

  def flushLargest(): Seq[PutEntry] = {
    val (key, o) = open.maxBy(_._2.aggregator.pendingBytes)
    open -= key
    flushed(key, o)
  }

  /** Removes the aggregates in progress whose key passes `which`: their records, and where the first came from. */
  def take(which: Key => Boolean): Seq[(Seq[UserRecord], String)] = {
    val taken = open.filter(e => which(e._1)).toVector
    open --= taken.map(_._1)
    taken.map { case (_, o) => (o.aggregator.drain(), o.first) }
  }

  private def flushed(key: Key, o: Open): Seq[PutEntry] = o.aggregator.flush().map(entry(key, _, o.first)).toSeq

  private def entry(key: Key, a: Aggregate, position: String): PutEntry =
    new PutEntry(key.stream, a.partitionKey, a.explicitHashKey.orNull, a.bytes, a.sizeBytes, orderingKey(key.unit),
      a.count, s"the aggregate of ${a.count} record(s) starting at $position", key.shard)
}

private object OpenAggregates {
  final case class Key(stream: Int, shard: String, unit: String)

  /** An aggregator, and where the first record of its aggregate in progress came from. */
  final class Open(val aggregator: KplAggregator) {
    var first: String = _
  }

  /** Everything of one unit of order shares an ordering key, so `ordering=perKey` keeps every key's order. */
  def orderingKey(unit: String): String = s"shard:$unit"
}
