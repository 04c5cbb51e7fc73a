package io.sparkkinesis.aws

import java.net.URLEncoder
import java.nio.charset.StandardCharsets.UTF_8

import software.amazon.awssdk.awscore.exception.{AwsErrorDetails, AwsServiceException}

/**
 * The one CloudWatch call the connector makes, PutMetricData, on the driver for a query's metrics publisher
 * (`cloudWatchMetrics=true`): sent as a request of CloudWatch's query API (form parameters, `Action` and
 * `Version`), a [[SignedPost]] to the service `monitoring` with the region and credentials of the query's
 * connection and its endpoint the connection's (`cloudWatchEndpointUrl`, else the region's). One attempt per call:
 * the publisher waits for its next interval instead.
 * An error answer comes back as an [[AwsServiceException]] with the service's error code and status.
 */
private[sparkkinesis] final class CloudWatchClient(post: SignedPost) extends AutoCloseable {

  /** PutMetricData with `parameters` (`Namespace`, `MetricData.member.N...`), which the caller encodes. */
  def putMetricData(parameters: Seq[(String, String)]): Unit = {
    val form = (Seq("Action" -> "PutMetricData", "Version" -> CloudWatchClient.ApiVersion) ++ parameters)
      .map { case (k, v) => s"${encode(k)}=${encode(v)}" }.mkString("&").getBytes(UTF_8)
    val (status, body) = post("PutMetricData",
      Seq("Content-Type" -> "application/x-www-form-urlencoded; charset=utf-8"), form) { answer =>
      answer.fold("") { in =>
        try new String(in.readAllBytes(), UTF_8)
        finally in.close()
      }
    }
    if (status / 100 != 2) {
      val code = CloudWatchClient.element(body, "Code").getOrElse("UnknownError")
      val message = CloudWatchClient.element(body, "Message").getOrElse(s"HTTP $status")
      throw AwsServiceException.builder().statusCode(status).message(message)
        .awsErrorDetails(AwsErrorDetails.builder().serviceName("CloudWatch").errorCode(code).errorMessage(message)
            .build()).build()
    }
  }

  private def encode(s: String): String = URLEncoder.encode(s, "UTF-8").replace("+", "%20")

  override def close(): Unit = post.close()
}

private[sparkkinesis] object CloudWatchClient {

  /** The version of CloudWatch's query API. */
  val ApiVersion = "2010-08-01"

  /** A client for `c` (its `endpointUrl` CloudWatch's). */
  def apply(c: AwsConnection): CloudWatchClient = new CloudWatchClient(SignedPost(c, "monitoring"))

  /** The text of the first `<name>` element of an error answer (CloudWatch's query API answers in XML). */
  private def element(xml: String, name: String): Option[String] =
    s"(?s)<$name>(.*?)</$name>".r.findFirstMatchIn(xml).map(_.group(1).trim).filter(_.nonEmpty)
}
