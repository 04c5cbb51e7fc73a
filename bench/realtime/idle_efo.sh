#!/usr/bin/env bash
# What an idle real-time query with enhanced fan-out costs in CPU (not part of CI; docs/performance.md,
# "Real-time mode"): a Scala main (jvm/src/test/spark-4.1+/.../source/IdleFanOutCpu.scala) reads an idle stream of
# SHARDS shards (default 50) on kinesis-mock in local[2], in one five-minute real-time batch, and prints the process
# CPU time of its JVM over SECONDS (default 60) of idle as a share of one core, with the busiest threads.
#
#   SPARK_JARS_DIR=<site-packages>/pyspark/jars bench/realtime/idle_efo.sh [SHARDS] [SECONDS]
# (`make bench-realtime-idle` sets SPARK_JARS_DIR.) About 2 minutes after compiling.
set -euo pipefail
cd "$(dirname "$0")/../.."
exec bin/sbt "connector/Test/runMain io.sparkkinesis.source.IdleFanOutCpu ${1:-50} ${2:-60}"
