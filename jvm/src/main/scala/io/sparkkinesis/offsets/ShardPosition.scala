package io.sparkkinesis.offsets

/**
 * How far a query has read one shard. Offsets hold one per shard; a micro-batch reads, for each shard, the
 * user records after its start position up to and including its end position.
 */
private[sparkkinesis] sealed trait ShardPosition extends Serializable
private[sparkkinesis] object ShardPosition {

  /** Nothing read yet; reading begins at `start` (trim horizon, a timestamp or a sequence number). */
  final case class NotStarted(start: StartPosition) extends ShardPosition

  /** Every user record up to and including `last` has been read. */
  final case class After(last: RecordPosition) extends ShardPosition

  /** The shard is closed and every record in it has been read. */
  case object Ended extends ShardPosition

  /** Whether `record` lies after `position` (so a batch starting at `position` includes it). */
  def includes(position: ShardPosition, record: RecordPosition): Boolean = position match {
    case After(last) => record.isAfter(last)
    case NotStarted(StartPosition.AtSequence(seq)) => BigInt(record.sequenceNumber) >= BigInt(seq)
    case NotStarted(StartPosition.AfterSequence(seq)) => BigInt(record.sequenceNumber) > BigInt(seq)
    case NotStarted(_) => true
    case Ended => false
  }

  /** Whether reading from `position` begins at a place no record names (trim horizon, latest, a timestamp). */
  def startsUntied(position: ShardPosition): Boolean = position match {
    case NotStarted(StartPosition.AtSequence(_) | StartPosition.AfterSequence(_)) => false
    case NotStarted(_) => true
    case _ => false
  }

  /** For messages: "after sequence number 5", "after sub-record 2 of sequence number 5", "not started (...)". */
  def describe(position: ShardPosition): String = position match {
    case After(last) if last.lastInAggregate => s"after sequence number ${last.sequenceNumber}"
    case After(last) => s"after sub-record ${last.subSequence} of sequence number ${last.sequenceNumber}"
    case NotStarted(start) => s"not started (to begin at $start)"
    case Ended => "the end of the shard"
  }

  /**
   * Where to point a new shard iterator to read what comes after `position`, and which user records of the first
   * Kinesis record to skip (those of an aggregate already read).
   */
  def resumeFrom(position: ShardPosition): (StartPosition, Option[RecordPosition]) = position match {
    case NotStarted(start) => (start, None)
    case After(last) if last.lastInAggregate => (StartPosition.AfterSequence(last.sequenceNumber), None)
    case After(last) => (StartPosition.AtSequence(last.sequenceNumber), Some(last))
    case Ended => throw new IllegalStateException("an ended shard has nothing more to read")
  }
}
