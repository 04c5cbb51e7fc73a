package io.sparkkinesis.kpl

import java.io.ByteArrayOutputStream
import java.nio.charset.StandardCharsets.UTF_8
import java.security.MessageDigest
import java.util.Arrays

import scala.collection.mutable
import scala.util.control.NoStackTrace

/** One user record: what a producer handed to the KPL, and what a consumer gets back after de-aggregation.
  *
  * `data` is an array, so equality and hashing are defined here by content (partition key, explicit hash
  * key and the bytes of `data`), not by array reference as a plain case class would do.
  */
final case class UserRecord(partitionKey: String, explicitHashKey: Option[String], data: Array[Byte]) {
  override def equals(other: Any): Boolean = other match {
    case o: UserRecord =>
      partitionKey == o.partitionKey && explicitHashKey == o.explicitHashKey && Arrays.equals(data, o.data)
    case _ => false
  }
  override def hashCode: Int = (partitionKey, explicitHashKey, Arrays.hashCode(data)).##
  override def toString: String = s"UserRecord($partitionKey, $explicitHashKey, ${data.length} bytes)"
}

/** One Kinesis record the sink puts: usually a KPL aggregate of `count` user records.
  *
  * `partitionKey` and `explicitHashKey` are the outer keys Kinesis routes the record by: those of the first
  * user record in it. Kinesis counts UTF-8 bytes of the partition key plus `bytes.length` against its record
  * size limit: that is [[sizeBytes]]. When a single user record does not fit once wrapped in the aggregate
  * framing, [[KplAggregator]] emits it unwrapped: then `bytes` is the user record's data and `count` is 1.
  * (As with the KPL itself, readers cannot tell such a record from an aggregate if its data happens to be a
  * well-formed aggregate, digest included.)
  *
  * Equality and hashing compare `bytes` by content.
  */
final case class Aggregate(partitionKey: String, explicitHashKey: Option[String], bytes: Array[Byte], count: Int) {
  /** The size Kinesis counts against its per-record limit: partition key UTF-8 bytes plus data bytes. */
  def sizeBytes: Long = Kpl.utf8Length(partitionKey).toLong + bytes.length

  override def equals(other: Any): Boolean = other match {
    case o: Aggregate =>
      partitionKey == o.partitionKey && explicitHashKey == o.explicitHashKey && count == o.count &&
        Arrays.equals(bytes, o.bytes)
    case _ => false
  }
  override def hashCode: Int = (partitionKey, explicitHashKey, Arrays.hashCode(bytes), count).##
  override def toString: String = s"Aggregate($partitionKey, $explicitHashKey, ${bytes.length} bytes, $count records)"
}

/** The KPL aggregated record format, and its reader (the writer is [[KplAggregator]]).
  *
  * An aggregated Kinesis record's data is:
  *  1. the 4 magic bytes `F3 89 9A C2`;
  *  1. a protobuf (proto2) message
  *     {{{
  *     message AggregatedRecord {
  *       repeated string partition_key_table     = 1;
  *       repeated string explicit_hash_key_table = 2;
  *       repeated Record records                 = 3;
  *     }
  *     message Record {
  *       required uint64 partition_key_index     = 1;  // into partition_key_table
  *       optional uint64 explicit_hash_key_index = 2;  // into explicit_hash_key_table
  *       required bytes  data                    = 3;
  *       repeated Tag    tags                    = 4;  // read past, never written
  *     }
  *     message Tag { required string key = 1; optional string value = 2; }
  *     }}}
  *  1. the 16-byte MD5 digest of the protobuf bytes.
  *
  * The protobuf is read by hand (no protobuf library): fields may come in any order, unknown fields of any
  * wire type (varint, 64-bit, length-delimited, group, 32-bit) are skipped, and for a repeated occurrence of a
  * singular field the last one wins, as protobuf specifies.
  */
object Kpl {
  /** The 4 bytes every aggregated record starts with. A copy: arrays are mutable. */
  def magic: Array[Byte] = Magic.clone()

  /** Length of the MD5 digest that ends every aggregated record. */
  val DigestSize: Int = 16

  /** Bytes an aggregate adds around its protobuf message: magic prefix and digest. */
  val FramingBytes: Int = 4 + DigestSize

  private[kpl] val Magic: Array[Byte] = Array(0xF3, 0x89, 0x9A, 0xC2).map(_.toByte)

  /** True when `blob` has the magic prefix, a non-empty protobuf body and a matching MD5 digest.
    * It says nothing about whether the body parses: [[deaggregate]] decides that.
    */
  def isAggregated(blob: Array[Byte]): Boolean =
    blob != null && blob.length > FramingBytes &&
      Arrays.equals(blob, 0, Magic.length, Magic, 0, Magic.length) && {
        val bodyEnd = blob.length - DigestSize
        val md5 = MessageDigest.getInstance("MD5")
        md5.update(blob, Magic.length, bodyEnd - Magic.length)
        Arrays.equals(md5.digest(), 0, DigestSize, blob, bodyEnd, blob.length)
      }

  /** The user records of an aggregated record, in the order they were aggregated: the index of a record in
    * the result is its sub-sequence number, so a reader can resume inside an aggregate by skipping records.
    *
    * `None` when `blob` is not a valid aggregate: no magic prefix, too short, wrong digest, a body that is not
    * a well-formed `AggregatedRecord`, a key index outside its table, or no user records at all. The caller
    * then treats `blob` as one plain record (so no data is ever dropped). Never throws, whatever the bytes.
    *
    * `outerPartitionKey` (the Kinesis record's own key) is not needed to decode: every user record carries
    * its key through the table. It is accepted so call sites read naturally and is not used otherwise.
    *
    * Keys are decoded as UTF-8; malformed sequences become U+FFFD, as protobuf readers do for proto2 strings.
    * A record without `explicit_hash_key_index` has no explicit hash key, even when the table is not empty.
    */
  def deaggregate(blob: Array[Byte], outerPartitionKey: String): Option[IndexedSeq[UserRecord]] =
    if (!isAggregated(blob)) None
    else
      try {
        val records = AggregatedRecordReader.read(blob, Magic.length, blob.length - DigestSize)
        if (records.isEmpty) None else Some(records)
      } catch {
        case Malformed => None
      }

  /** Bytes of `s` in UTF-8, without allocating them. */
  private[kpl] def utf8Length(s: String): Int = {
    var n = 0
    var i = 0
    while (i < s.length) {
      val c = s.charAt(i)
      if (c < 0x80) n += 1
      else if (c < 0x800) n += 2
      else if (Character.isHighSurrogate(c) && i + 1 < s.length && Character.isLowSurrogate(s.charAt(i + 1))) {
        n += 4
        i += 1
      } else if (Character.isSurrogate(c)) n += 1 // unpaired: String.getBytes writes '?'
      else n += 3
      i += 1
    }
    n
  }

  /** Thrown inside the reader on malformed input; never escapes [[deaggregate]]. */
  private[kpl] case object Malformed extends RuntimeException("malformed KPL aggregate") with NoStackTrace
}

/** Protobuf wire format constants shared by the reader and the writer. */
private[kpl] object Wire {
  val Varint = 0
  val Fixed64 = 1
  val LengthDelimited = 2
  val StartGroup = 3
  val EndGroup = 4
  val Fixed32 = 5

  /** Nesting allowed for unknown groups before the input is called malformed (bounds recursion). */
  val MaxGroupDepth = 64

  /** Bytes of `v` (taken as unsigned) as a base-128 varint. */
  def varintSize(v: Long): Int = {
    var n = 1
    var rest = v >>> 7
    while (rest != 0) { n += 1; rest >>>= 7 }
    n
  }
}

/** A cursor over `buf[pos, end)` that decodes protobuf wire primitives, throwing `Kpl.Malformed` on
  * truncated or invalid input.
  */
private[kpl] final class WireReader(buf: Array[Byte], private var pos: Int, end: Int) {
  import Kpl.Malformed

  def hasMore: Boolean = pos < end

  /** A base-128 varint of at most 10 bytes; bits past 64 are dropped, as protobuf does. */
  def varint(): Long = {
    var result = 0L
    var shift = 0
    while (true) {
      if (pos >= end || shift >= 70) throw Malformed
      val b = buf(pos)
      pos += 1
      if (shift < 64) result |= (b & 0x7FL) << shift
      if (b >= 0) return result
      shift += 7
    }
    throw Malformed // unreachable
  }

  /** A field tag as (field number, wire type). Field number 0 and wire types 6 and 7 do not exist. */
  def tag(): (Int, Int) = {
    val t = varint()
    val field = t >>> 3
    val wireType = (t & 7).toInt
    if (field == 0 || field > Int.MaxValue || wireType > Wire.Fixed32) throw Malformed
    (field.toInt, wireType)
  }

  /** A length-delimited field's payload as (offset, length) into the buffer; the cursor moves past it. */
  def lengthDelimited(): (Int, Int) = {
    val len = varint()
    if (len < 0 || len > end - pos) throw Malformed
    val start = pos
    pos += len.toInt
    (start, len.toInt)
  }

  /** An index into a table of `tableSize` entries, read as a uint64. */
  def index(tableSize: Int): Int = {
    val v = varint()
    if (v < 0 || v >= tableSize) throw Malformed
    v.toInt
  }

  def string(): String = {
    val (off, len) = lengthDelimited()
    new String(buf, off, len, UTF_8)
  }

  /** Moves past one field of `wireType` whose tag was just read (groups run up to their end tag). */
  def skip(field: Int, wireType: Int, depth: Int = 0): Unit = wireType match {
    case Wire.Varint => varint()
    case Wire.Fixed64 => advance(8)
    case Wire.Fixed32 => advance(4)
    case Wire.LengthDelimited => lengthDelimited()
    case Wire.StartGroup =>
      if (depth >= Wire.MaxGroupDepth) throw Malformed
      var closed = false
      while (!closed) {
        val (f, w) = tag()
        if (w == Wire.EndGroup) { if (f != field) throw Malformed; closed = true }
        else skip(f, w, depth + 1)
      }
    case _ => throw Malformed // an end-group tag with no group open
  }

  private def advance(n: Int): Unit = {
    if (end - pos < n) throw Malformed
    pos += n
  }
}

/** Decodes an `AggregatedRecord` body into user records. */
private[kpl] object AggregatedRecordReader {
  import Kpl.Malformed

  def read(buf: Array[Byte], from: Int, until: Int): IndexedSeq[UserRecord] = {
    val partitionKeys = mutable.ArrayBuffer.empty[String]
    val hashKeys = mutable.ArrayBuffer.empty[String]
    val recordSlices = mutable.ArrayBuffer.empty[(Int, Int)]
    val in = new WireReader(buf, from, until)
    while (in.hasMore) {
      in.tag() match {
        case (1, Wire.LengthDelimited) => partitionKeys += in.string()
        case (2, Wire.LengthDelimited) => hashKeys += in.string()
        case (3, Wire.LengthDelimited) => recordSlices += in.lengthDelimited() // decoded once the tables are complete
        case (field, wireType) => in.skip(field, wireType)
      }
    }
    val (pks, ehks) = (partitionKeys.toIndexedSeq, hashKeys.toIndexedSeq)
    recordSlices.iterator.map { case (off, len) => record(buf, off, off + len, pks, ehks) }.toIndexedSeq
  }

  private def record(buf: Array[Byte], from: Int, until: Int,
                     partitionKeys: IndexedSeq[String], hashKeys: IndexedSeq[String]): UserRecord = {
    var pkIndex = -1
    var ehkIndex = -1
    var data: Array[Byte] = null
    val in = new WireReader(buf, from, until)
    while (in.hasMore) {
      in.tag() match {
        case (1, Wire.Varint) => pkIndex = in.index(partitionKeys.size)
        case (2, Wire.Varint) => ehkIndex = in.index(hashKeys.size)
        case (3, Wire.LengthDelimited) =>
          val (off, len) = in.lengthDelimited()
          data = Arrays.copyOfRange(buf, off, off + len)
        case (field, wireType) => in.skip(field, wireType) // tags (4) and anything unknown
      }
    }
    if (pkIndex < 0 || data == null) throw Malformed // required fields
    UserRecord(partitionKeys(pkIndex), if (ehkIndex < 0) None else Some(hashKeys(ehkIndex)), data)
  }
}

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
final class KplAggregator(maxAggregateBytes: Long) {
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
  private def tableIndex(key: String, index: mutable.Map[String, Int], table: ByteArrayOutputStream,
                         field: Int): Int =
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

/** Encodes the few protobuf wire primitives the aggregator writes. */
private[kpl] object WireWriter {
  def varint(out: ByteArrayOutputStream, value: Long): Unit = {
    var v = value
    while ((v & ~0x7FL) != 0) {
      out.write(((v & 0x7F) | 0x80).toInt)
      v >>>= 7
    }
    out.write(v.toInt)
  }

  def tag(out: ByteArrayOutputStream, field: Int, wireType: Int): Unit =
    varint(out, (field.toLong << 3) | wireType)

  def varintField(out: ByteArrayOutputStream, field: Int, value: Long): Unit = {
    tag(out, field, Wire.Varint)
    varint(out, value)
  }

  def bytesField(out: ByteArrayOutputStream, field: Int, payload: Array[Byte]): Unit = {
    tag(out, field, Wire.LengthDelimited)
    varint(out, payload.length.toLong)
    out.write(payload, 0, payload.length)
  }
}
