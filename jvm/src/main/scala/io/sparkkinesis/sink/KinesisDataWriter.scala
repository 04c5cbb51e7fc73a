package io.sparkkinesis.sink

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.write.{DataWriter, WriterCommitMessage}

import io.sparkkinesis.aws.KinesisClients
import io.sparkkinesis.errors.{KinesisErrors, KinesisOptionException}

/** Nothing to coordinate on the driver: Kinesis has no transactions, and every record is durable once acknowledged. */
case object KinesisWriterCommitMessage extends WriterCommitMessage

/** Executor side of a write: batches the partition's rows into PutRecords calls and sends them. */
final class KinesisDataWriter(options: SinkOptions, schema: SinkSchema, partitionId: Int, taskId: Long)
  extends DataWriter[InternalRow] {

  private val counters = new SinkCounters
  private val batcher = new PutRecordsBatcher(options.limits)
  private val sender = new PutRecordsSender(
    KinesisClients.async(options.connection, options.maxInFlightRequests), options.stream,
    options.maxInFlightRequests, options.maxRetries, counters)
  private var rowIndex = 0L

  override def write(row: InternalRow): Unit = {
    val data = schema.data(row)
    val key = schema.partitionKey(row)
    if (data == null) throw nullColumn("data")
    if (key == null || key.isEmpty) throw nullColumn("partitionKey")
    if (key.length > 256)
      throw KinesisErrors.invalidSinkSchema(s"Row $rowIndex of partition $partitionId has a partition key of " +
        s"${key.length} characters.", "partition keys of 1 to 256 characters.")
    val bytes = SinkSchema.recordBytes(key, data)
    if (bytes > options.limits.maxRecordBytes)
      throw KinesisErrors.recordTooLarge(s"row $rowIndex of partition $partitionId", bytes, options.limits.maxRecordBytes)
    batcher.add(PutEntry(key, data, bytes, rowIndex)).foreach(sender.submit)
    rowIndex += 1
  }

  override def commit(): WriterCommitMessage = {
    batcher.flush().foreach(sender.submit)
    sender.awaitAll()
    KinesisWriterCommitMessage
  }

  override def abort(): Unit = sender.close()

  override def close(): Unit = sender.close()

  private def nullColumn(column: String): KinesisOptionException =
    KinesisErrors.invalidSinkSchema(s"Row $rowIndex of partition $partitionId has a null or empty '$column'.",
      SinkSchema.Expected + "; filter such rows out or give them a value.")
}
