package io.sparkkinesis

import io.sparkkinesis.config.Dialect

/**
 * The connector's read registered as format `dynamodb-streams`: a DynamoDB table's change stream, by `tableName` or
 * `dynamoDbStreamArn`, read by the same engine as Kinesis (offsets, lineage, planning, triggers, budgets, metrics), through
 * the DynamoDB Streams client (`fetching.ShardService.DynamoDbStreams`), with its own columns
 * (`reader.KinesisSchema.DynamoDbStreams`). See docs/dynamodb-streams.md.
 */
final class DynamoDbStreamsSourceProvider extends KinesisSourceProvider(Dialect.DynamoDbStreams)
