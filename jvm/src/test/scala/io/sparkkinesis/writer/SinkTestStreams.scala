package io.sparkkinesis.writer

import io.sparkkinesis.compat.CollectionConverters._

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.types.{BinaryType, StringType, StructField, StructType}
import org.apache.spark.unsafe.types.UTF8String

import io.sparkkinesis.testing.LocalKinesisServer
import io.sparkkinesis.testing.TestStreams

/** Sink tests' rows, schemas and writers; streams themselves come from [[TestStreams]]. */
object SinkTestStreams {
  private val Mi = 1024L * 1024

  val textSchema: StructType = StructType(Seq(StructField("data", StringType), StructField("partitionKey", StringType)))
  val binarySchema: StructType =
    StructType(Seq(StructField("data", BinaryType), StructField("partitionKey", StringType)))

  def row(values: Any*): InternalRow = InternalRow.fromSeq(values.map {
    case s: String => UTF8String.fromString(s)
    case other => other
  })

  /** Sink options for `stream` on `server`, through `client`, with the given option overrides. */
  def options(
      server: LocalKinesisServer,
      stream: String,
      client: SinkClientFactory,
      extra: Map[String, String] = Map.empty,
      hasStreamColumn: Boolean = false): SinkOptions = {
    SinkOptions.parse((TestStreams.options(server, stream) ++ extra).filter(_._2 != null).asJava, hasStreamColumn).copy(
      clientFactory = client)
  }

  /** Writes rows as one task would, commits, and returns the writer's final metrics by name. */
  def writeTask(
      options: SinkOptions,
      schema: StructType,
      rows: Iterator[InternalRow],
      partitionId: Int = 0): Map[String, Long] = {
    val writer = new KinesisDataWriter(options, SinkSchema.of(schema, options.partitionKeyColumn), partitionId, 1L)
    try {
      rows.foreach(writer.write) // as Spark 3.5 does; Spark 4 calls writeAll, which sends before commit too
      writer.commit()
      writer.currentMetricsValues().map(m => m.name() -> m.value()).toMap
    } catch {
      case e: Throwable => writer.abort(); throw e
    } finally writer.close()
  }

  val MaxRequestBytes: Long = 5 * Mi
}
