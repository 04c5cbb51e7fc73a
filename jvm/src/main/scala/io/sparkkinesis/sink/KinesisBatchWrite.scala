package io.sparkkinesis.sink

import org.apache.spark.sql.connector.write.{BatchWrite, DataWriterFactory, PhysicalWriteInfo, WriterCommitMessage}
import io.sparkkinesis.writer.{KinesisDataWriterFactory, SinkOptions, SinkSchema}

/**
 * Nothing to do on the driver: Kinesis has no transactions and a record is durable once acknowledged, so a
 * job that fails after some tasks committed leaves their records in the stream (at-least-once, docs/sink.md).
 * For the same reason a task does not ask Spark's commit coordinator before it commits: its records are in the
 * stream by then, and a denial could not take them back.
 */
private[sparkkinesis] final class KinesisBatchWrite(options: SinkOptions, schema: SinkSchema) extends BatchWrite {
  override def createBatchWriterFactory(info: PhysicalWriteInfo): DataWriterFactory =
    new KinesisDataWriterFactory(options, schema)
  override def commit(messages: Array[WriterCommitMessage]): Unit = ()
  override def abort(messages: Array[WriterCommitMessage]): Unit = ()
  override def useCommitCoordinator(): Boolean = false
}
