"""Real-time mode (Spark 4.1+): Kinesis to Kinesis, each record passed on as it arrives, and its latency printed.

The pipeline reads --stream with trigger(realTime=...) and writes each record to the --output stream as JSON that
carries the input record's arrival time:

    data          {"data":"<the input payload>","in_arrival_ms":1769860800123,"source_shard":"shardId-...",
                   "source_sequence":"4960...","source_sub":0}
    partitionKey  the input record's partition key

A second query (micro-batches) reads --output and prints, for each of its batches, how long the records took from
arriving in the input stream to arriving in the output stream, both by the service's clock (p50, p99, max).

    python examples/real_time.py --stream clicks --output clicks-copy --region us-east-1 \\
        --endpoint-url http://127.0.0.1:4566 --checkpoint /tmp/clicks-rt --option minFetchPeriod=50ms

It runs until Ctrl-C, or until the monitor has seen --max-records records. Each input shard holds a task slot for
the whole real-time batch: give Spark more cores than the input stream has shards (e.g. local[4] for two), so that
the monitor's micro-batches have some too. Writing to Kinesis in real-time mode
needs three settings, made here (docs/source.md, "Real-time mode"): Spark's real-time allowlist check off for the
session, _asyncProgressTrackingOverrideSinkSupportCheck=true on the query (or asyncProgressTrackingEnabled=false,
which pauses longer at each batch end), and the sink option maxRecordDelay. Delivery is
at-least-once: the source_shard, source_sequence and source_sub fields name each input record for de-duplication.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Dict, List, Optional, Sequence

from example_support import make_parser, parse_options, spark_session, with_real_time_trigger

NAME = "real_time"
PAYLOAD = "data STRING, in_arrival_ms LONG, source_shard STRING, source_sequence STRING, source_sub LONG"


def percentile(sorted_values: List[int], fraction: float) -> int:
    """The value at `fraction` (0..1) of an ascending list (nearest rank)."""
    return sorted_values[min(len(sorted_values) - 1, int(len(sorted_values) * fraction))]


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = make_parser(__doc__, "the stream to write to (name or ARN)")
    parser.add_argument("--batch-duration", default="5 minutes",
                        help="how long each real-time batch runs; offsets are checkpointed when one ends "
                             "(default: 5 minutes)")
    parser.add_argument("--max-records", type=int, default=0,
                        help="stop once the monitor has seen this many records (default: run until Ctrl-C)")
    parser.add_argument("--max-record-delay", default="10ms",
                        help="the sink's maxRecordDelay: longest a record waits in the writer (default: 10ms)")
    parser.add_argument("--sink-option", action="append", default=[], metavar="NAME=VALUE",
                        help="another option of the Kinesis sink; repeat for several")
    args = parser.parse_args(argv)
    if args.available_now:
        parser.error("--available-now does not apply: a real-time query runs until it is stopped")
    source_options = parse_options(args.option, parser)
    sink_options = parse_options(args.sink_option, parser)

    spark = spark_session(NAME)
    # The Kinesis sink is not on Spark's real-time allowlist: turn the check off for this session.
    spark.conf.set("spark.sql.streaming.realTimeMode.allowlistCheck", "false")

    from pyspark.sql import functions as F

    from spark_kinesis import kinesis_stream, write_kinesis

    connection: Dict[str, Any] = {"region": args.region, "endpoint_url": args.endpoint_url}
    source = kinesis_stream(spark, args.stream, initial_position=args.initial_position, **connection,
                            **source_options)
    out = source.select(
        F.to_json(F.struct(
            F.col("data").cast("string").alias("data"),
            F.expr("unix_millis(approximateArrivalTimestamp)").alias("in_arrival_ms"),
            F.col("shardId").alias("source_shard"),
            F.col("sequenceNumber").alias("source_sequence"),
            F.col("subSequenceNumber").alias("source_sub"))).alias("data"),
        "partitionKey")
    writer = write_kinesis(out, args.output, max_record_delay=args.max_record_delay, **connection, **sink_options)
    assert writer is not None
    # Spark writes its offset and commit logs beside the batches, not between them, only for the sinks it knows;
    # this internal option of Spark's lifts that check for the Kinesis sink (docs/source.md, "Sinks": it shortens
    # the pause at each batch end; `asyncProgressTrackingEnabled=false` is the alternative).
    configured = (writer.option("_asyncProgressTrackingOverrideSinkSupportCheck", "true")
                .option("checkpointLocation", f"{args.checkpoint}/pipeline").queryName(NAME)
                .outputMode("update"))
    # trigger(realTime=...) from PySpark 4.2 on; the helper also covers PySpark 4.1 (example_support.py).
    pipeline = with_real_time_trigger(configured, args.batch_duration).start()

    seen = {"records": 0}

    def report(batch: Any, batch_id: int) -> None:
        rows = batch.select(F.from_json(F.col("data").cast("string"), PAYLOAD).alias("p"),
                            F.expr("unix_millis(approximateArrivalTimestamp)").alias("out_ms")) \
            .select((F.col("out_ms") - F.col("p.in_arrival_ms")).alias("ms")).collect()
        latencies = sorted(int(r.ms) for r in rows if r.ms is not None)
        if not latencies:
            return
        seen["records"] += len(latencies)
        print(f"[{NAME}] batch {batch_id}: {len(latencies):,} records; input to output latency "
              f"p50 {percentile(latencies, 0.5):,} ms, p99 {percentile(latencies, 0.99):,} ms, "
              f"max {latencies[-1]:,} ms", flush=True)

    monitor = (kinesis_stream(spark, args.output, initial_position="trim_horizon", **connection,
                              **{k: v for k, v in source_options.items() if k in ("cborEnabled",)})
               .writeStream.foreachBatch(report).option("checkpointLocation", f"{args.checkpoint}/monitor")
               .trigger(processingTime="1 second").start())
    print(f"[{NAME}] reading {args.stream} in real-time mode (batches of {args.batch_duration}), writing to "
          f"{args.output}; checkpoint {args.checkpoint}", flush=True)
    try:
        while args.max_records <= 0 or seen["records"] < args.max_records:
            for query in (pipeline, monitor):
                if query.exception() is not None:
                    print(f"[{NAME}] a query failed: {query.exception()}", flush=True)
                    return 1
            time.sleep(0.2)
    except KeyboardInterrupt:
        print(f"[{NAME}] stopping", flush=True)
    finally:
        monitor.stop()
        pipeline.stop()
    print(f"[{NAME}] done: {seen['records']:,} records passed through", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
