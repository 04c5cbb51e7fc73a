package io.sparkkinesis.aws

import java.time.Instant
import java.util.Locale

import software.amazon.awssdk.services.kinesis.model.StreamDescriptionSummary

import io.sparkkinesis.config.StreamProperties

/**
 * What the service says of a stream (DescribeStreamSummary): what a Kinesis catalog's table shows as its properties
 * (`DESCRIBE TABLE EXTENDED`, `SHOW TBLPROPERTIES`), under the names `CREATE TABLE` and `ALTER TABLE` take where they
 * can be set (`shardCount`, `streamMode`).
 */
private[sparkkinesis] final case class StreamFacts(
    name: String,
    arn: String,
    status: String,
    mode: String,
    openShards: Int,
    retentionHours: Int,
    consumers: Option[Int],
    maxRecordSizeKiB: Option[Int],
    encryption: Option[String],
    created: Option[Instant]) {

  def active: Boolean = status == "ACTIVE"

  def properties: Map[String, String] = Map(
    "streamArn" -> arn,
    "streamStatus" -> status,
    StreamProperties.ShardCount -> openShards.toString,
    StreamProperties.StreamMode -> mode,
    "retentionHours" -> retentionHours.toString,
    // The service's default where it does not say (an older API, the local servers).
    "maxRecordSizeKiB" -> maxRecordSizeKiB.getOrElse(1024).toString) ++
    consumers.map("consumerCount" -> _.toString) ++
    encryption.map("encryption" -> _) ++
    created.map("createdAt" -> _.toString)
}

private[sparkkinesis] object StreamFacts {

  def of(s: StreamDescriptionSummary): StreamFacts = StreamFacts(
    s.streamName(),
    s.streamARN(),
    s.streamStatusAsString(),
    Option(s.streamModeDetails()).flatMap(d => Option(d.streamModeAsString())).map(_.toLowerCase(Locale.ROOT))
      .getOrElse(StreamProperties.Provisioned),
    Option(s.openShardCount()).map(_.intValue).getOrElse(0),
    Option(s.retentionPeriodHours()).map(_.intValue).getOrElse(24),
    Option(s.consumerCount()).map(_.intValue),
    Option(s.maxRecordSizeInKiB()).map(_.intValue),
    Option(s.encryptionTypeAsString()).filter(_ != "null"),
    Option(s.streamCreationTimestamp()))
}
