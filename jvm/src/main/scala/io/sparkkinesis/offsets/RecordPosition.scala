package io.sparkkinesis.offsets

/** A user record's place in a shard: its Kinesis sequence number and, inside a KPL aggregate, its index. */
private[sparkkinesis] final case class RecordPosition(
    sequenceNumber: String,
    subSequence: Long,
    lastInAggregate: Boolean) {
  lazy val sequence: BigInt = BigInt(sequenceNumber)

  /** Whether this record comes strictly after `other` in the shard. */
  def isAfter(other: RecordPosition): Boolean = {
    val c = sequence.compare(other.sequence)
    c > 0 || (c == 0 && subSequence > other.subSequence)
  }
}
