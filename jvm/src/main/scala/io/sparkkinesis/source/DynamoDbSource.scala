package io.sparkkinesis.source

import io.sparkkinesis.aws.{AwsConnection, DynamoDbStreams, StreamRef}
import io.sparkkinesis.compat.Variants
import io.sparkkinesis.config.{Dialect, KinesisOptions => O, ParsedOptions}
import io.sparkkinesis.errors.KinesisErrors

/**
 * What `format("dynamodb-streams")` asks of a read's options besides the engine's ([[SourceOptions]]): one stream,
 * by `tableName` (its latest stream, looked up now) or `dynamoDbStreamArn`, none of the options DynamoDB Streams has
 * no use for (enhanced fan-out), and VARIANT images only where Spark has the type.
 */
private[source] object DynamoDbSource {

  def check(opts: ParsedOptions): Unit = {
    val format = Dialect.DynamoDbStreams.format
    if (opts.contains(O.StreamName))
      throw KinesisErrors.conflictingOptions(s"Format '$format' reads a DynamoDB table's stream: name it with " +
        s"'${O.TableName.name}' or '${O.StreamArn.name}' instead of 'streamName'.")
    (opts.get(O.TableName), opts.get(O.StreamArn)) match {
      case (None, None) => throw KinesisErrors.missingOption(O.TableName.name, "orders")
      case (Some(_), Some(_)) =>
        throw KinesisErrors.conflictingOptions(
          s"Options '${O.TableName.name}' and '${O.StreamArn.name}' both name the stream to read; keep one of them.")
      case _ =>
    }
    if (opts.getOrDefault(O.ConsumerMode) != "polling" || opts.contains(O.RegisteredConsumerId))
      throw KinesisErrors.conflictingOptions(
        s"DynamoDB Streams has no enhanced fan-out: remove '${O.ConsumerMode.name}' and the consumer options.")
    if (opts.getOrDefault(O.ImageColumnType) == "variant" && !Variants.supported)
      throw KinesisErrors.invalidOptionValue(O.ImageColumnType.name, "variant",
        s"'string' on Spark ${org.apache.spark.SPARK_VERSION}, which has no VARIANT type (Spark 4.0 and later have " +
          "it); read the images with from_dynamodb_json instead")
  }

  /** The latest stream of the table `tableName` names (there is one, enabled, or the error says how to add it). */
  def stream(opts: ParsedOptions): StreamRef =
    DynamoDbStreams.latestOf(AwsConnection.fromOptions(opts, Nil), opts.get(O.TableName).get)
}
