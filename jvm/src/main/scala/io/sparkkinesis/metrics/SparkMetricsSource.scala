package io.sparkkinesis.metrics

import com.codahale.metrics.{Gauge, MetricRegistry}

/**
 * The gauges of one query run for Spark's metrics system, named `<query>.source.<stream>.<metric>` for each stream
 * read and `<query>.sink.<stream>.<metric>` for the sink (`<stream>` is `streamName`, or `perRow` when each row names
 * its stream), plus `cloudWatchPublishes` and `cloudWatchFailures` when the query publishes to CloudWatch. Each gauge
 * reads the figures the driver already holds ([[QueryMetrics.stats]]).
 */
private[sparkkinesis] object SparkMetricsSource {

  /** What the sink's gauges are named after when rows name their streams. */
  val PerRow = "perRow"

  def registry(q: QueryMetrics): MetricRegistry = {
    val r = new MetricRegistry
    def gauge[T](name: String)(value: => T): Unit = r.register(name, new Gauge[T] { override def getValue: T = value })
    def read(stream: String): Option[ReadStats] = q.stats().reads.find(_.stream == stream)
    q.readStreams.distinct.foreach { stream =>
      val p = s"source.$stream"
      gauge[Long](s"$p.maxMsBehindLatest")(read(stream).fold(0L)(_.maxMsBehindLatest))
      gauge[Double](s"$p.avgMsBehindLatest")(read(stream).fold(0d)(_.avgMsBehindLatest))
      gauge[Long](s"$p.pendingRecords")(read(stream).fold(0L)(_.pendingRecords))
      gauge[Long](s"$p.pendingBytes")(read(stream).fold(0L)(_.pendingBytes))
      gauge[Long](s"$p.throttledCalls")(read(stream).fold(0L)(_.throttledCalls))
      gauge[Long](s"$p.recordsRead")(read(stream).fold(0L)(_.recordsRead))
      gauge[Long](s"$p.bytesRead")(read(stream).fold(0L)(_.bytesRead))
    }
    q.writes.foreach { case (_, stream, _) =>
      val p = s"sink.${stream.getOrElse(PerRow)}"
      def written: Option[WriteStats] = q.stats().writes
      gauge[Long](s"$p.recordsWritten")(written.fold(0L)(_.recordsWritten))
      gauge[Long](s"$p.bytesWritten")(written.fold(0L)(_.bytesWritten))
      gauge[Long](s"$p.throttledRecords")(written.fold(0L)(_.throttledRecords))
    }
    q.publisher.foreach { p =>
      gauge[Long]("cloudWatchPublishes")(p.publishes)
      gauge[Long]("cloudWatchFailures")(p.failures)
    }
    r
  }
}
