package io.sparkkinesis.config

/**
 * What each stream in `streamName` must match in full: a stream name, or a stream ARN (whose groups are the
 * partition, the region, the account and the name). `aws.StreamRef` parses with them; the docs generator writes
 * them into the Python package's checks, so both sides accept the same streams.
 */
private[sparkkinesis] object StreamNamePatterns {
  val Name = "[A-Za-z0-9_.-]{1,128}"
  val Arn = "arn:(aws[a-z-]*):kinesis:([a-z0-9-]+):([0-9]{12}):stream/([A-Za-z0-9_.-]{1,128})"
}
