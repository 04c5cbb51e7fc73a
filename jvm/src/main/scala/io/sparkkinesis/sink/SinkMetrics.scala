package io.sparkkinesis.sink

import org.apache.spark.sql.connector.metric.{CustomMetric, CustomSumMetric, CustomTaskMetric}

/** Counters of one writer, reported to Spark as the sink's custom metrics (summed over tasks). */
final class SinkCounters {
  @volatile var recordsWritten = 0L
  @volatile var bytesWritten = 0L
  @volatile var putRecordsCalls = 0L
  @volatile var retriedRecords = 0L
  @volatile var throttledRecords = 0L
  @volatile var droppedRecords = 0L

  def values: Array[CustomTaskMetric] = Array(
    SinkMetrics.task(SinkMetrics.RecordsWritten, recordsWritten),
    SinkMetrics.task(SinkMetrics.BytesWritten, bytesWritten),
    SinkMetrics.task(SinkMetrics.PutRecordsCalls, putRecordsCalls),
    SinkMetrics.task(SinkMetrics.RetriedRecords, retriedRecords),
    SinkMetrics.task(SinkMetrics.ThrottledRecords, throttledRecords),
    SinkMetrics.task(SinkMetrics.DroppedRecords, droppedRecords))
}

object SinkMetrics {
  val RecordsWritten = "recordsWritten"
  val BytesWritten = "bytesWritten"
  val PutRecordsCalls = "putRecordsCalls"
  val RetriedRecords = "retriedRecords"
  val ThrottledRecords = "throttledRecords"
  val DroppedRecords = "droppedRecords"

  /** What `Write.supportedCustomMetrics` declares; Spark builds them again by class name on the driver. */
  def supported: Array[CustomMetric] = Array(
    new RecordsWrittenMetric, new BytesWrittenMetric, new PutRecordsCallsMetric,
    new RetriedRecordsMetric, new ThrottledRecordsMetric, new DroppedRecordsMetric)

  private[sink] def task(metricName: String, metricValue: Long): CustomTaskMetric = new CustomTaskMetric {
    override def name(): String = metricName
    override def value(): Long = metricValue
  }
}

/** Input rows that reached Kinesis (a KPL aggregate counts the rows it carries). */
final class RecordsWrittenMetric extends CustomSumMetric {
  override def name(): String = SinkMetrics.RecordsWritten
  override def description(): String = "Kinesis records written"
}

/** Bytes acknowledged by Kinesis, partition keys included, as the service counts them. */
final class BytesWrittenMetric extends CustomSumMetric {
  override def name(): String = SinkMetrics.BytesWritten
  override def description(): String = "Kinesis bytes written"
}

final class PutRecordsCallsMetric extends CustomSumMetric {
  override def name(): String = SinkMetrics.PutRecordsCalls
  override def description(): String = "Kinesis PutRecords calls"
}

/** Record sends that failed and were scheduled again (one record retried twice counts 2). */
final class RetriedRecordsMetric extends CustomSumMetric {
  override def name(): String = SinkMetrics.RetriedRecords
  override def description(): String = "Kinesis records retried"
}

/** Failed record sends whose cause was throttling (ProvisionedThroughputExceeded, a throttled call). */
final class ThrottledRecordsMetric extends CustomSumMetric {
  override def name(): String = SinkMetrics.ThrottledRecords
  override def description(): String = "Kinesis records throttled"
}

/** Rows not written because they were over `maxRecordSize` with `oversizeRecordAction=drop`. */
final class DroppedRecordsMetric extends CustomSumMetric {
  override def name(): String = SinkMetrics.DroppedRecords
  override def description(): String = "Kinesis records dropped as oversize"
}
