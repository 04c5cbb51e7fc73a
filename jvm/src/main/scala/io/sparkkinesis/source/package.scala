// Package io.sparkkinesis.source: Driver-side planning of reads: the scan and batch, the micro-batch stream
// (offsets, prefetch rounds, metrics), the shard tracker (listing and lineage), the planner, the quiet watch, and
// the real-time stream (in the spark-4.1+ folder). Rows come from reader/; the driver looks at shards only to
// plan (listing, the quiet watch's one-record looks). May import reader, prefetch, fetching, offsets, kpl, aws,
// config, runtime, compat, errors.
package io.sparkkinesis.source
