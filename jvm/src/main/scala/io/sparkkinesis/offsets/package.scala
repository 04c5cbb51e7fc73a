// Package io.sparkkinesis.offsets: Where a query stands: shard keys and positions, the source offset, its one
// versioned JSON codec, and the awslabs connector's offsets read as ours. Immutable values. May import aws, config,
// runtime, compat, errors.
package io.sparkkinesis.offsets
