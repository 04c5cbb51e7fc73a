package io.sparkkinesis.sink

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.write._
import org.apache.spark.sql.connector.write.streaming.{StreamingDataWriterFactory, StreamingWrite}

/** Builds the write once the input schema is known; bad schemas fail here, when the query starts. */
final class KinesisWriteBuilder(info: LogicalWriteInfo) extends WriteBuilder with SupportsTruncate {
  private lazy val options = SinkOptions.parse(info.options())

  /** Kinesis cannot be truncated: every save mode appends (see docs/sink.md). */
  override def truncate(): WriteBuilder = this

  override def build(): Write = new KinesisWrite(options, SinkSchema.of(info.schema()))
}

final class KinesisWrite(options: SinkOptions, schema: SinkSchema) extends Write {
  override def description(): String = s"KinesisWrite(stream=${options.stream}, region=${options.connection.region})"
  override def toBatch: BatchWrite = new KinesisBatchWrite(options, schema)
  override def toStreaming: StreamingWrite = new KinesisStreamingWrite(options, schema)
}

final class KinesisDataWriterFactory(options: SinkOptions, schema: SinkSchema)
  extends DataWriterFactory with StreamingDataWriterFactory {
  override def createWriter(partitionId: Int, taskId: Long): DataWriter[InternalRow] =
    new KinesisDataWriter(options, schema, partitionId, taskId)
  override def createWriter(partitionId: Int, taskId: Long, epochId: Long): DataWriter[InternalRow] =
    new KinesisDataWriter(options, schema, partitionId, taskId)
}

final class KinesisBatchWrite(options: SinkOptions, schema: SinkSchema) extends BatchWrite {
  override def createBatchWriterFactory(info: PhysicalWriteInfo): DataWriterFactory =
    new KinesisDataWriterFactory(options, schema)
  override def commit(messages: Array[WriterCommitMessage]): Unit = ()
  override def abort(messages: Array[WriterCommitMessage]): Unit = ()
}

final class KinesisStreamingWrite(options: SinkOptions, schema: SinkSchema) extends StreamingWrite {
  override def createStreamingWriterFactory(info: PhysicalWriteInfo): StreamingDataWriterFactory =
    new KinesisDataWriterFactory(options, schema)
  override def commit(epochId: Long, messages: Array[WriterCommitMessage]): Unit = ()
  override def abort(epochId: Long, messages: Array[WriterCommitMessage]): Unit = ()
}
