// Package io.sparkkinesis.kpl: The KPL aggregated record format: de-aggregation for reads, aggregation for the sink.
// No AWS calls. May import aws, config, runtime, compat, errors (offsets is a peer: neither uses the other).
package io.sparkkinesis.kpl
