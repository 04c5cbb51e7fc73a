// Package io.sparkkinesis: The top: wiring only. KinesisSourceProvider (format `kinesis`) and
// AwsKinesisSourceProvider (`aws-kinesis`) hand Spark a KinesisTable, which builds the read's scan (source/) and the
// write (sink/). May import every package below; nothing below imports it.
package io.sparkkinesis
