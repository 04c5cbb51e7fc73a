package io.sparkkinesis.writer

/**
 * One Kinesis record to put, with its size as the service counts it (partition key plus data), the stream it
 * goes to (an index into [[SinkStreams]]), and what the writer needs to retry it: how often and since when it
 * has failed, and when it may be sent again.
 *
 * @param orderingKey the key whose order `ordering=perKey` keeps: the partition key, or for a KPL record (which
 *                    holds several partition keys) the unit of order its keys belong to ([[KplShardMaps]])
 * @param userRecords how many input rows the record carries (more than one for a KPL aggregate)
 * @param position    where the record came from, for error messages ("row 12 of partition 3")
 * @param packedFor   with `aggregation=kpl`, the shard the record was packed for, to find out when it lands in
 *                    another (the stream was resharded); null otherwise
 */
private[sparkkinesis] final class PutEntry(
    val stream: Int,
    val partitionKey: String,
    val explicitHashKey: String,
    val data: Array[Byte],
    val bytes: Long,
    val orderingKey: String,
    val userRecords: Int,
    val position: String,
    val packedFor: String = null) {

  private[writer] var failures: Int = 0
  private[writer] var firstFailureNanos: Long = 0L
  private[writer] var notBeforeNanos: Long = 0L

  override def toString: String = s"PutEntry($position, $bytes bytes, stream #$stream)"
}

private[sparkkinesis] object PutEntry {

  /** An entry for one row. */
  def apply(stream: Int, partitionKey: String, explicitHashKey: String, data: Array[Byte], position: String): PutEntry =
    new PutEntry(stream, partitionKey, explicitHashKey, data, SinkSchema.recordBytes(partitionKey, data),
      partitionKey, 1, position)
}
