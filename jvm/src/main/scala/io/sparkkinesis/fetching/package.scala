// Package io.sparkkinesis.fetching: How one shard is read: the ShardFetcher seam and its two kinds (GetRecords
// polling, enhanced fan-out), the one factory that chooses (ShardFetchers), range re-reads, the pool real-time tasks
// keep fetchers in. May import offsets, kpl, aws, config, runtime, compat, errors.
package io.sparkkinesis.fetching
