package io.sparkkinesis.metrics

import java.time.Instant

import software.amazon.awssdk.services.cloudwatch.model.{Dimension, MetricDatum, PutMetricDataRequest, StandardUnit}

import io.sparkkinesis.aws.{AwsConnection, KinesisClients}

/** One value to publish: a metric's name, unit (CloudWatch's `StandardUnit` text), value and dimensions. */
private[sparkkinesis] final case class Datum(
    name: String,
    unit: String,
    value: Double,
    dimensions: Seq[(String, String)])

private[sparkkinesis] object Datum {
  val Milliseconds = "Milliseconds"
  val Count = "Count"
  val Bytes = "Bytes"
}

/** Where a [[CloudWatchPublisher]] sends its data: one PutMetricData call per `put`. */
private[sparkkinesis] trait CloudWatchSender extends AutoCloseable {
  def put(namespace: String, at: Instant, data: Seq[Datum]): Unit
}

private[sparkkinesis] object CloudWatchSender {

  /** PutMetricData takes at most 1,000 metrics a call. */
  val MaxPerCall = 1000

  /**
   * The sender of `settings`' connection: the SDK's CloudWatch client of that connection, which
   * [[KinesisClients.cloudWatch]] builds and caches per connection (queries with the same connection share it).
   */
  def apply(settings: CloudWatchSettings): CloudWatchSender = new ClientSender(settings.connection)

  /** The PutMetricData request of `data` in `namespace` at `at`. */
  def request(namespace: String, at: Instant, data: Seq[Datum]): PutMetricDataRequest =
    PutMetricDataRequest.builder().namespace(namespace).metricData(data.map { d =>
      MetricDatum.builder().metricName(d.name).unit(StandardUnit.fromValue(d.unit)).value(d.value).timestamp(at)
        .dimensions(d.dimensions.map { case (n, v) => Dimension.builder().name(n).value(v).build() }: _*).build()
    }: _*).build()

  /**
   * Looks the client up at every call, so that a client the cache closed (least recently used) is never used; closing
   * the sender leaves the shared client to the cache.
   */
  private final class ClientSender(connection: AwsConnection) extends CloudWatchSender {
    override def put(namespace: String, at: Instant, data: Seq[Datum]): Unit =
      KinesisClients.cloudWatch(connection).putMetricData(request(namespace, at, data))
    override def close(): Unit = ()
  }
}
