package io.sparkkinesis.metrics

import io.sparkkinesis.aws.{AwsConnection, EndpointVariants}
import io.sparkkinesis.config.{KinesisOptions => O, ParsedOptions}
import io.sparkkinesis.errors.KinesisErrors

/**
 * `cloudWatchMetrics=true` and its settings: the namespace, the dimensions added to the connector's own
 * (`QueryName`, `StreamName`), and the connection to CloudWatch: the query's region and credentials, with
 * `cloudWatchEndpointUrl` as the endpoint (the Kinesis `endpointUrl` is not CloudWatch's).
 */
private[sparkkinesis] final case class CloudWatchSettings(
    namespace: String,
    dimensions: Seq[(String, String)],
    connection: AwsConnection)

private[sparkkinesis] object CloudWatchSettings {

  /** CloudWatch takes at most 30 dimensions a metric; the connector sets two. */
  val MaxExtraDimensions = 28

  /** The settings when `cloudWatchMetrics=true`, checked; None otherwise (then the other options are refused). */
  def parse(opts: ParsedOptions, queryConnection: AwsConnection): Option[CloudWatchSettings] =
    if (!opts.getOrDefault(O.CloudWatchMetrics)) {
      Seq(O.CloudWatchNamespace, O.CloudWatchDimensions, O.CloudWatchEndpointUrl).find(opts.contains).foreach { o =>
        throw KinesisErrors.conflictingOptions(
          s"Option '${o.name}' is only used with 'cloudWatchMetrics=true'; set that too or remove it.")
      }
      None
    } else {
      val namespace = opts.getOrDefault(O.CloudWatchNamespace)
      if (namespace.length > 255 || namespace.startsWith("AWS/") || !namespace.forall(validNamespaceChar))
        throw KinesisErrors.invalidOptionValue(O.CloudWatchNamespace.name, namespace,
          "a CloudWatch namespace of up to 255 letters, digits and . - _ / # : (not starting with AWS/), " +
            "e.g. SparkKinesis")
      val endpoint = opts.get(O.CloudWatchEndpointUrl)
      endpoint.foreach(AwsConnection.validateUrl(O.CloudWatchEndpointUrl.name, _,
          "https://monitoring.eu-west-1.amazonaws.com or http://127.0.0.1:5000"))
      if (endpoint.isEmpty)
        EndpointVariants.host(EndpointVariants.Service.CloudWatch, queryConnection.region, queryConnection.endpoints)
      val dimensions = opts.get(O.CloudWatchDimensions).fold(Seq.empty[(String, String)])(parseDimensions)
      Some(CloudWatchSettings(namespace, dimensions,
          queryConnection.copy(endpointUrl = endpoint, cborEnabled = true)))
    }

  private def validNamespaceChar(c: Char): Boolean =
    (c.isLetterOrDigit && c < 128) || ".-_/#: ".indexOf(c.toInt) >= 0

  /** `Name=value,Name=value`: names and values not empty, names not the connector's own, at most 28. */
  def parseDimensions(text: String): Seq[(String, String)] = {
    val expected = "dimensions as Name=value pairs separated by commas, e.g. Environment=prod,Team=payments " +
      s"(at most $MaxExtraDimensions, names other than QueryName and StreamName)"
    val pairs = text.split(",").toSeq.map(_.trim).filter(_.nonEmpty).map { pair =>
      pair.split("=", 2) match {
        case Array(name, value)
            if name.trim.nonEmpty && value.trim.nonEmpty && name.trim.length <= 255 &&
              value.trim.length <= 1024 =>
          name.trim -> value.trim
        case _ => throw KinesisErrors.invalidOptionValue(O.CloudWatchDimensions.name, text, expected)
      }
    }
    val names = pairs.map(_._1)
    if (pairs.isEmpty || pairs.size > MaxExtraDimensions || names.distinct.size != names.size ||
      names.exists(n => Dimensions.Own.contains(n)))
      throw KinesisErrors.invalidOptionValue(O.CloudWatchDimensions.name, text, expected)
    pairs
  }
}

/** The dimensions the connector sets on every metric it publishes. */
private[sparkkinesis] object Dimensions {
  val QueryName = "QueryName"
  val StreamName = "StreamName"
  val Own: Set[String] = Set(QueryName, StreamName)
}
