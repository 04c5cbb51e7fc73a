// Package io.sparkkinesis.aws: Talking to AWS: connections and credentials, the cached clients, the one failure
// policy (Failure, RetryPolicy, Backoff), the one ListShards, stream checks and fan-out consumers. May import
// config, runtime, compat, errors.
package io.sparkkinesis.aws
