// Package io.sparkkinesis.reader: Executor-side reading of planned ranges: input partitions (what a task is told)
// and their readers (batch, micro-batch, real-time), which turn records into rows. May import prefetch, fetching,
// offsets, kpl, aws, config, runtime, compat, errors.
package io.sparkkinesis.reader
