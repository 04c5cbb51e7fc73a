package io.sparkkinesis.sink

import org.apache.spark.sql.connector.write.{PhysicalWriteInfo, WriterCommitMessage}
import org.apache.spark.sql.connector.write.streaming.{StreamingDataWriterFactory, StreamingWrite}
import io.sparkkinesis.writer.{KinesisDataWriterFactory, SinkOptions, SinkSchema}

/**
 * A streaming query's sink. An epoch's records are all acknowledged when its tasks commit; an epoch re-run
 * after a failure or restart writes its records again (at-least-once, docs/sink.md). A committed epoch's
 * counters go to the query's progress through `progress`. A task commits without asking Spark's commit
 * coordinator (a call to the driver at every task's end, which matters at a real-time batch's end): its records
 * are in the stream by then, and a denial could not take them back.
 */
private[sparkkinesis] final class KinesisStreamingWrite(
    options: SinkOptions,
    schema: SinkSchema,
    progress: StreamingSinkProgress)
  extends StreamingWrite {
  override def createStreamingWriterFactory(info: PhysicalWriteInfo): StreamingDataWriterFactory =
    new KinesisDataWriterFactory(options, schema)
  override def commit(epochId: Long, messages: Array[WriterCommitMessage]): Unit = progress.committed(messages)
  override def abort(epochId: Long, messages: Array[WriterCommitMessage]): Unit = ()
  override def useCommitCoordinator(): Boolean = false
}
