package io.sparkkinesis.kpl

import java.security.MessageDigest
import java.util.Arrays

import scala.util.control.NoStackTrace

import io.sparkkinesis.wire.WireFormatException

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
private[sparkkinesis] object Kpl {

  /** Length of the MD5 digest that ends every aggregated record. */
  val DigestSize: Int = 16

  /** Bytes an aggregate adds around its protobuf message: magic prefix and digest. */
  val FramingBytes: Int = 4 + DigestSize

  private[kpl] val Magic: Array[Byte] = Array(0xF3, 0x89, 0x9A, 0xC2).map(_.toByte)

  /** The 4 bytes every aggregated record starts with. A copy: arrays are mutable. */
  def magic: Array[Byte] = Magic.clone()

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
        case Malformed | _: WireFormatException => None
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

  /** Thrown inside the reader on malformed input (as is the wire reader's `WireFormatException`); never escapes
    * [[deaggregate]].
    */
  private[kpl] case object Malformed extends RuntimeException("malformed KPL aggregate") with NoStackTrace
}
