package io.sparkkinesis.kpl

import java.util.Arrays

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
private[sparkkinesis] final case class Aggregate(
    partitionKey: String,
    explicitHashKey: Option[String],
    bytes: Array[Byte],
    count: Int) {

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
