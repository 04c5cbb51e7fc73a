package io.sparkkinesis.fetching

import io.sparkkinesis.kpl.Kpl
import io.sparkkinesis.offsets.RecordPosition
import software.amazon.awssdk.services.kinesis.model.Record

/** One user record read from a shard (a plain Kinesis record, or one record of a KPL aggregate). */
private[sparkkinesis] final case class BufferedRecord(
    position: RecordPosition,
    partitionKey: String,
    data: Array[Byte],
    arrivalMillis: Long) {

  /** What the record weighs against byte limits (`maxBytesPerTrigger`): data plus partition key. */
  def size: Long = data.length.toLong + partitionKey.length

  /**
   * What holding the record costs the heap, an estimate that errs high: the data array, the partition key and the
   * sequence number as strings, and the objects around them (headers, references, the position). It is what
   * `fetchBufferSize` bounds; [[BufferedRecordSuite]] checks it against the heap measured.
   */
  def heapBytes: Long =
    BufferedRecord.ArrayOverhead + data.length + 2 * BufferedRecord.StringOverhead + partitionKey.length +
      position.sequenceNumber.length + BufferedRecord.ObjectOverhead
}

private[sparkkinesis] object BufferedRecord {
  // 64-bit JVM, compressed references, compact (Latin-1) strings: a byte array's header and padding; a string's
  // object, its array's header and padding; the record, its position, their fields and the position's BigInt.
  private val ArrayOverhead = 24L
  private val StringOverhead = 48L
  private val ObjectOverhead = 176L

  /**
   * The user records of one Kinesis record, de-aggregating KPL aggregates, less those of an aggregate that `kept`
   * drops ([[SubRecordFilter]]: outside the shard's hash key range). A record kept keeps its place: its
   * sub-sequence number is its index in the aggregate, and only the aggregate's last user record is
   * `lastInAggregate`, whatever was dropped, so offsets are those of a read that drops nothing.
   */
  def fromKinesis(r: Record, kept: SubRecordFilter): IndexedSeq[BufferedRecord] = {
    val data = r.data().asByteArrayUnsafe()
    val arrival = r.approximateArrivalTimestamp().toEpochMilli
    Kpl.deaggregate(data, r.partitionKey()) match {
      case Some(users) if users.nonEmpty =>
        users.indices.filter(i => kept.keeps(users(i))).map { i =>
          val u = users(i)
          BufferedRecord(RecordPosition(r.sequenceNumber(), i.toLong, i == users.size - 1), u.partitionKey, u.data,
            arrival)
        }
      case _ => IndexedSeq(BufferedRecord(RecordPosition(r.sequenceNumber(), 0L, lastInAggregate = true),
            r.partitionKey(), data, arrival))
    }
  }
}
