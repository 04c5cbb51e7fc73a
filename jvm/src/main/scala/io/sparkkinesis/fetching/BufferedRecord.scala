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

  /** What the record weighs against byte limits: data plus partition key. */
  def size: Long = data.length.toLong + partitionKey.length
}

private[sparkkinesis] object BufferedRecord {

  /** The user records of one Kinesis record, de-aggregating KPL aggregates. */
  def fromKinesis(r: Record): IndexedSeq[BufferedRecord] = {
    val data = r.data().asByteArrayUnsafe()
    val arrival = r.approximateArrivalTimestamp().toEpochMilli
    Kpl.deaggregate(data, r.partitionKey()) match {
      case Some(users) if users.nonEmpty =>
        users.indices.map { i =>
          val u = users(i)
          BufferedRecord(RecordPosition(r.sequenceNumber(), i.toLong, i == users.size - 1), u.partitionKey, u.data,
            arrival)
        }
      case _ => IndexedSeq(BufferedRecord(RecordPosition(r.sequenceNumber(), 0L, lastInAggregate = true),
            r.partitionKey(), data, arrival))
    }
  }
}
