// Package io.sparkkinesis.prefetch: The executors' read-ahead for micro-batch streams: per-shard buffers, the
// prefetch round a task runs on them (Prefetcher), its messages to and from the driver, and the background read-
// ahead. May import fetching, offsets, kpl, aws, config, runtime, compat, errors.
package io.sparkkinesis.prefetch
