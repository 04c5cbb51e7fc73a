package io.sparkkinesis.kpl

import java.io.ByteArrayOutputStream
import java.nio.charset.StandardCharsets.UTF_8
import java.security.MessageDigest
import java.util.Arrays

import scala.collection.mutable

import io.sparkkinesis.wire.{Wire, WireWriter}

/** Packs user records into KPL aggregates no larger than `maxAggregateBytes`, for the sink.
  *
  * Feed records with [[add]] and finish with [[flush]]; both hand back completed [[Aggregate]]s, in input
  * order. The size an aggregate is held to is what Kinesis counts against a record: outer partition key UTF-8
  * bytes plus the aggregate's bytes (magic, protobuf, digest). The limit is computed exactly, so aggregates
  * are packed as full as the limit allows.
  *
  * A user record that cannot fit in an aggregate of its own (the framing costs a few dozen bytes) but does
  * fit as a plain Kinesis record is emitted alone, unwrapped (see [[Aggregate]]). One that does not fit even
  * plain is rejected by [[add]] with an `IllegalArgumentException`, leaving the aggregator unchanged.
  *
  * The outer partition key and explicit hash key are those of the aggregate's first record, so the whole
  * aggregate goes to that record's shard: callers that care which shard each user record lands on should
  * aggregate per shard. Partition keys and explicit hash keys are de-duplicated in their tables; the explicit
  * hash key table is written only when some record has one. Tags are never written. The output is laid out
  * in field order (key table, hash key table, records), as protobuf serializers write it, so for the same
  * records it is byte-for-byte what other KPL-format writers (the KPL, aws-kinesis-agg) produce.
  *
  * Not thread-safe.
  */
private[sparkkinesis] final class KplAggregator(maxAggregateBytes: Long) {
  require(maxAggregateBytes > 0, s"maxAggregateBytes must be positive, got $maxAggregateBytes")

  private val partitionKeyIndex = mutable.HashMap.empty[String, Int]
  private val hashKeyIndex = mutable.HashMap.empty[String, Int]
  private val partitionKeyTable = new ByteArrayOutputStream()
  private val hashKeyTable = new ByteArrayOutputStream()
  private val records = new ByteArrayOutputStream()
  private var outerPartitionKey: String = _
  private var outerHashKey: Option[String] = None
  private var count = 0

  /** A record too big for the framing, waiting to be emitted on its own. */
  private var pendingPlain: Option[Aggregate] = None

  /** Adds `r`. Returns the aggregate in progress when `r` does not fit in it (`r` then starts the next one),
    * or a pending unwrapped record; `None` while the aggregate in progress still has room.
    *
    * @throws IllegalArgumentException when `r` is too big even as a plain Kinesis record
    */
  def add(r: UserRecord): Option[Aggregate] = {
    require(r != null && r.partitionKey != null && r.data != null && r.explicitHashKey != null,
      "a user record needs a partition key and data")
    val plainSize = Kpl.utf8Length(r.partitionKey).toLong + r.data.length
    if (aloneSize(r) > maxAggregateBytes && plainSize > maxAggregateBytes)
      throw new IllegalArgumentException(
        s"a user record of $plainSize bytes (partition key + data) does not fit in a Kinesis record of at most " +
          s"$maxAggregateBytes bytes")
    if (pendingPlain.isEmpty && count > 0 && sizeIfAdded(r) <= maxAggregateBytes) {
      append(r)
      None
    } else {
      val done = flush()
      start(r)
      done
    }
  }

  /** Hands back whatever is in progress (an aggregate or a pending unwrapped record) and empties the
    * aggregator; `None` when it was empty.
    */
  def flush(): Option[Aggregate] =
    if (pendingPlain.isDefined) {
      val out = pendingPlain
      pendingPlain = None
      out
    } else if (count == 0) None
    else {
      val out = Aggregate(outerPartitionKey, outerHashKey, serialize(), count)
      reset()
      Some(out)
    }

  /** Hands back the user records in progress (those [[flush]] would pack), in the order added, and empties the
    * aggregator: for a caller that packs them again elsewhere.
    */
  def drain(): IndexedSeq[UserRecord] = {
    val out = pendingPlain match {
      case Some(plain) => IndexedSeq(UserRecord(plain.partitionKey, plain.explicitHashKey, plain.bytes))
      case None if count == 0 => IndexedSeq.empty
      case None =>
        val body = new ByteArrayOutputStream(bodySize.toInt)
        partitionKeyTable.writeTo(body)
        hashKeyTable.writeTo(body)
        records.writeTo(body)
        val bytes = body.toByteArray
        AggregatedRecordReader.read(bytes, 0, bytes.length)
    }
    pendingPlain = None
    reset()
    out
  }

  /** The Kinesis-counted size ([[Aggregate.sizeBytes]]) the aggregate in progress would have with `r` added,
    * or, when nothing is in progress, that of an aggregate holding `r` alone. Does not change anything.
    */
  def sizeIfAdded(r: UserRecord): Long =
    if (count == 0 || pendingPlain.isDefined) aloneSize(r)
    else Kpl.utf8Length(outerPartitionKey) + Kpl.FramingBytes + bodySize + growth(r, empty = false)

  /** User records held and not yet handed back. */
  def pendingRecords: Int = if (pendingPlain.isDefined) 1 else count

  /** Kinesis-counted size of what [[flush]] would hand back now; 0 when empty. */
  def pendingBytes: Long =
    pendingPlain.map(_.sizeBytes).getOrElse(
      if (count == 0) 0L else Kpl.utf8Length(outerPartitionKey) + Kpl.FramingBytes + bodySize)

  private def bodySize: Long = partitionKeyTable.size.toLong + hashKeyTable.size + records.size

  private def aloneSize(r: UserRecord): Long =
    Kpl.utf8Length(r.partitionKey).toLong + Kpl.FramingBytes + growth(r, empty = true)

  /** Protobuf bytes `r` adds: its key table entries (unless already there) and its `Record` field. When
    * `empty`, as if nothing were in progress.
    */
  private def growth(r: UserRecord, empty: Boolean): Long = {
    def tableEntry(key: String, index: mutable.Map[String, Int]): (Long, Int) =
      if (empty) (fieldSize(Kpl.utf8Length(key).toLong), 0)
      else index.get(key) match {
        case Some(i) => (0L, i)
        case None => (fieldSize(Kpl.utf8Length(key).toLong), index.size)
      }
    val (pkEntry, pkIndex) = tableEntry(r.partitionKey, partitionKeyIndex)
    val ehk = r.explicitHashKey.map(tableEntry(_, hashKeyIndex))
    pkEntry + ehk.fold(0L)(_._1) + fieldSize(recordSize(pkIndex, ehk.map(_._2), r.data.length))
  }

  /** Bytes of an encoded `Record` message (tags 1 to 3, one byte each). */
  private def recordSize(pkIndex: Int, ehkIndex: Option[Int], dataLength: Int): Long =
    1L + Wire.varintSize(pkIndex.toLong) + ehkIndex.fold(0L)(i => 1L + Wire.varintSize(i.toLong)) +
      fieldSize(dataLength.toLong)

  /** A length-delimited field with a one-byte tag (field numbers 1 to 15) and a payload of `len` bytes. */
  private def fieldSize(len: Long): Long = 1L + Wire.varintSize(len) + len

  private def start(r: UserRecord): Unit =
    if (aloneSize(r) <= maxAggregateBytes) append(r)
    else pendingPlain = Some(Aggregate(r.partitionKey, r.explicitHashKey, r.data.clone(), 1))

  private def append(r: UserRecord): Unit = {
    if (count == 0) {
      outerPartitionKey = r.partitionKey
      outerHashKey = r.explicitHashKey
    }
    val pkIndex = tableIndex(r.partitionKey, partitionKeyIndex, partitionKeyTable, field = 1)
    val ehkIndex = r.explicitHashKey.map(tableIndex(_, hashKeyIndex, hashKeyTable, field = 2))
    WireWriter.tag(records, field = 3, Wire.LengthDelimited)
    WireWriter.varint(records, recordSize(pkIndex, ehkIndex, r.data.length))
    WireWriter.varintField(records, field = 1, pkIndex.toLong)
    ehkIndex.foreach(i => WireWriter.varintField(records, field = 2, i.toLong))
    WireWriter.bytesField(records, field = 3, r.data)
    count += 1
  }

  /** The index of `key` in its table, adding it (and its encoded entry) when new. */
  private def tableIndex(key: String, index: mutable.Map[String, Int], table: ByteArrayOutputStream, field: Int): Int =
    index.getOrElseUpdate(key, {
        WireWriter.bytesField(table, field, key.getBytes(UTF_8))
        index.size
      })

  private def serialize(): Array[Byte] = {
    val out = new ByteArrayOutputStream(Kpl.FramingBytes + bodySize.toInt)
    out.write(Kpl.Magic)
    partitionKeyTable.writeTo(out)
    hashKeyTable.writeTo(out)
    records.writeTo(out)
    val bytes = out.toByteArray
    val md5 = MessageDigest.getInstance("MD5")
    md5.update(bytes, Kpl.Magic.length, bytes.length - Kpl.Magic.length)
    val withDigest = Arrays.copyOf(bytes, bytes.length + Kpl.DigestSize)
    System.arraycopy(md5.digest(), 0, withDigest, bytes.length, Kpl.DigestSize)
    withDigest
  }

  private def reset(): Unit = {
    partitionKeyIndex.clear()
    hashKeyIndex.clear()
    partitionKeyTable.reset()
    hashKeyTable.reset()
    records.reset()
    outerPartitionKey = null
    outerHashKey = None
    count = 0
  }
}
