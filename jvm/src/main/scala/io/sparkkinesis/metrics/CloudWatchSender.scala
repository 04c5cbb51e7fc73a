package io.sparkkinesis.metrics

import java.time.Instant
import java.time.format.DateTimeFormatter

import io.sparkkinesis.aws.CloudWatchClient

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

  /** The sender of a [[CloudWatchClient]] built for `settings`' connection. */
  def apply(settings: CloudWatchSettings): CloudWatchSender = new ClientSender(CloudWatchClient(settings.connection))

  /** PutMetricData's parameters for `data` in `namespace` at `at`, as CloudWatch's query API names them. */
  def parameters(namespace: String, at: Instant, data: Seq[Datum]): Seq[(String, String)] = {
    val time = DateTimeFormatter.ISO_INSTANT.format(at)
    ("Namespace" -> namespace) +: data.zipWithIndex.flatMap { case (d, i) =>
      val m = s"MetricData.member.${i + 1}"
      Seq(s"$m.MetricName" -> d.name, s"$m.Unit" -> d.unit,
        s"$m.Value" -> java.math.BigDecimal.valueOf(d.value).toPlainString, s"$m.Timestamp" -> time) ++
        d.dimensions.zipWithIndex.flatMap { case ((name, value), j) =>
          Seq(s"$m.Dimensions.member.${j + 1}.Name" -> name, s"$m.Dimensions.member.${j + 1}.Value" -> value)
        }
    }
  }

  private final class ClientSender(client: CloudWatchClient) extends CloudWatchSender {
    override def put(namespace: String, at: Instant, data: Seq[Datum]): Unit =
      client.putMetricData(parameters(namespace, at, data))
    override def close(): Unit = client.close()
  }
}
