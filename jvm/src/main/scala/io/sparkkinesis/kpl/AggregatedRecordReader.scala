package io.sparkkinesis.kpl

import java.util.Arrays

import scala.collection.mutable

import io.sparkkinesis.wire.{Wire, WireReader}

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

  private def record(
      buf: Array[Byte],
      from: Int,
      until: Int,
      partitionKeys: IndexedSeq[String],
      hashKeys: IndexedSeq[String]): UserRecord = {
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
