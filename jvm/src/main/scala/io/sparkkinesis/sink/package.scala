// Package io.sparkkinesis.sink: Writing: the write builder, batch and streaming writes, the executors' data writers
// with their queue of entries (limits, order), the PutRecords sender, KPL packing and the sink's metrics. May import
// kpl, aws, config, runtime, compat, errors, and nothing of the read side.
package io.sparkkinesis.sink
