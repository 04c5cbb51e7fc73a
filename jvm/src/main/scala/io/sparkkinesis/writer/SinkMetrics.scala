package io.sparkkinesis.writer

import org.apache.spark.sql.connector.metric.{CustomMetric, CustomSumMetric, CustomTaskMetric}

/** Counters of one writer, reported to Spark as the sink's custom metrics (summed over tasks). */
private[sparkkinesis] final class SinkCounters {
  @volatile var recordsWritten = 0L
  @volatile var bytesWritten = 0L
  @volatile var putRecordsCalls = 0L
  @volatile var retriedRecords = 0L
  @volatile var throttledRecords = 0L
  @volatile var droppedRecords = 0L
  @volatile var resentRecords = 0L

  def snapshot: SinkCounts = SinkCounts(recordsWritten, bytesWritten, putRecordsCalls, retriedRecords,
    throttledRecords, droppedRecords, resentRecords)

  def values: Array[CustomTaskMetric] =
    snapshot.byName.map { case (name, value) => SinkMetrics.task(name, value) }.toArray
}

/** The sink's counters as a value: what a task sends to the driver when it commits, and their sums. */
private[sparkkinesis] final case class SinkCounts(
    recordsWritten: Long = 0L,
    bytesWritten: Long = 0L,
    putRecordsCalls: Long = 0L,
    retriedRecords: Long = 0L,
    throttledRecords: Long = 0L,
    droppedRecords: Long = 0L,
    resentRecords: Long = 0L) {

  def +(o: SinkCounts): SinkCounts = SinkCounts(recordsWritten + o.recordsWritten, bytesWritten + o.bytesWritten,
    putRecordsCalls + o.putRecordsCalls, retriedRecords + o.retriedRecords, throttledRecords + o.throttledRecords,
    droppedRecords + o.droppedRecords, resentRecords + o.resentRecords)

  /** Metric name to value, in the order of [[SinkMetrics.supported]]. */
  def byName: Seq[(String, Long)] = Seq(
    SinkMetrics.RecordsWritten -> recordsWritten,
    SinkMetrics.BytesWritten -> bytesWritten,
    SinkMetrics.PutRecordsCalls -> putRecordsCalls,
    SinkMetrics.RetriedRecords -> retriedRecords,
    SinkMetrics.ThrottledRecords -> throttledRecords,
    SinkMetrics.DroppedRecords -> droppedRecords,
    SinkMetrics.ResentRecords -> resentRecords)
}

private[sparkkinesis] object SinkMetrics {
  val RecordsWritten = "recordsWritten"
  val BytesWritten = "bytesWritten"
  val PutRecordsCalls = "putRecordsCalls"
  val RetriedRecords = "retriedRecords"
  val ThrottledRecords = "throttledRecords"
  val DroppedRecords = "droppedRecords"
  val ResentRecords = "resentRecords"

  /** What `Write.supportedCustomMetrics` declares; Spark builds them again by class name on the driver. */
  def supported: Array[CustomMetric] = Array(
    new RecordsWrittenMetric, new BytesWrittenMetric, new PutRecordsCallsMetric,
    new RetriedRecordsMetric, new ThrottledRecordsMetric, new DroppedRecordsMetric, new ResentRecordsMetric)

  private[writer] def task(metricName: String, metricValue: Long): CustomTaskMetric = new CustomTaskMetric {
    override def name(): String = metricName
    override def value(): Long = metricValue
  }
}

/**
 * A sink metric summed over tasks. Spark re-creates each by class name with no arguments, so every metric is a
 * class of its own that names itself.
 */
private[sparkkinesis] abstract class SinkSumMetric(metricName: String, text: String) extends CustomSumMetric {
  override def name(): String = metricName
  override def description(): String = text
}

/** Input rows that reached Kinesis (a KPL aggregate counts the rows it carries). */
private[sparkkinesis] final class RecordsWrittenMetric
  extends SinkSumMetric(SinkMetrics.RecordsWritten, "Kinesis records written")

/** Bytes acknowledged by Kinesis, partition keys included, as the service counts them. */
private[sparkkinesis] final class BytesWrittenMetric
  extends SinkSumMetric(SinkMetrics.BytesWritten, "Kinesis bytes written")

private[sparkkinesis] final class PutRecordsCallsMetric
  extends SinkSumMetric(SinkMetrics.PutRecordsCalls, "Kinesis PutRecords calls")

/** Record sends that failed and were scheduled again (one record retried twice counts 2). */
private[sparkkinesis] final class RetriedRecordsMetric
  extends SinkSumMetric(SinkMetrics.RetriedRecords, "Kinesis records retried")

/** Failed record sends whose cause was throttling (ProvisionedThroughputExceeded, a throttled call). */
private[sparkkinesis] final class ThrottledRecordsMetric
  extends SinkSumMetric(SinkMetrics.ThrottledRecords, "Kinesis records throttled")

/** Rows not written because they were over `maxRecordSize` with `oversizeRecordAction=drop`. */
private[sparkkinesis] final class DroppedRecordsMetric
  extends SinkSumMetric(SinkMetrics.DroppedRecords, "Kinesis records dropped as oversize")

/**
 * With `aggregation=kpl`, rows sent again because the aggregate that carried them landed, after a reshard, in a
 * shard whose hash range does not hold their key (consumers such as the KCL drop such copies).
 */
private[sparkkinesis] final class ResentRecordsMetric
  extends SinkSumMetric(SinkMetrics.ResentRecords, "Kinesis records re-sent after a reshard")
