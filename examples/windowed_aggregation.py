"""Windowed aggregation: records and bytes per partition key and time window of arrival, with a watermark.

Records are grouped by `window(approximateArrivalTimestamp, --window)` (when Kinesis accepted them) and
partition key, and counted. The watermark (--watermark behind the latest arrival seen) bounds the state: a window
is final, and its state dropped, once the watermark passes its end; records arriving later than that for an
older window are ignored.

Output (update mode): every micro-batch appends the windows it changed to the Parquet folder --output, with the
batch id. The current value of a window is its row with the highest `batch_id`, e.g.

    SELECT * FROM (SELECT *, row_number() OVER (PARTITION BY window_start, partitionKey
                                                ORDER BY batch_id DESC) AS n FROM parquet.`<output>`) WHERE n = 1

Run it once over what the stream holds now (here against a local server; credentials come from the AWS SDK's
default chain):

    python examples/windowed_aggregation.py --stream orders --region us-east-1 \\
        --endpoint-url http://127.0.0.1:4566 --window "1 minute" --watermark "30 seconds" \\
        --checkpoint /tmp/orders-per-minute/checkpoint --output /tmp/orders-per-minute/data --available-now

Without --available-now it runs until Ctrl-C. Each batch prints a progress line and the windows it updated.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Optional, Sequence

from example_support import make_parser, parse_options, run_query, spark_session, with_trigger

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

NAME = "windowed_aggregation"


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = make_parser(__doc__, "the Parquet folder the updated windows are appended to")
    parser.add_argument("--window", default="1 minute", help="window length (default: 1 minute)")
    parser.add_argument("--watermark", default="30 seconds",
                        help="how late a record may arrive, behind the latest one seen, and still count "
                             "(default: 30 seconds)")
    parser.add_argument("--shuffle-partitions", type=int, default=8,
                        help="partitions of the aggregation state; fixed by the first run of a checkpoint "
                             "(default: 8; raise it for many keys)")
    parser.add_argument("--show", type=int, default=5, help="windows to print per batch (default: 5)")
    args = parser.parse_args(argv)
    options = parse_options(args.option, parser)

    spark = spark_session(NAME, {"spark.sql.shuffle.partitions": str(args.shuffle_partitions),
                                 "spark.sql.session.timeZone": "UTC"})

    from pyspark.sql import functions as F

    from spark_kinesis import kinesis_stream

    records = kinesis_stream(spark, args.stream, region=args.region, endpoint_url=args.endpoint_url,
                             initial_position=args.initial_position, **options)
    per_window = (records
                  .withWatermark("approximateArrivalTimestamp", args.watermark)
                  .groupBy(F.window("approximateArrivalTimestamp", args.window).alias("window"), "partitionKey")
                  .agg(F.count(F.lit(1)).alias("records"), F.sum(F.length("data")).alias("bytes"))
                  .select(F.col("window.start").alias("window_start"), F.col("window.end").alias("window_end"),
                          "partitionKey", "records", "bytes"))

    def write_batch(batch: DataFrame, batch_id: int) -> None:
        batch = batch.withColumn("batch_id", F.lit(batch_id)).persist()
        try:
            batch.write.mode("append").parquet(args.output)
            changed = batch.count()
            if changed and args.show > 0:
                shown = (batch.orderBy(F.col("records").desc(), "window_start", "partitionKey").limit(args.show)
                         .select(F.date_format("window_start", "yyyy-MM-dd HH:mm:ss").alias("start"),
                                 F.date_format("window_end", "HH:mm:ss").alias("end"),
                                 "partitionKey", "records", "bytes"))
                for row in shown.collect():
                    print(f"[{NAME}]   {row.start}-{row.end} UTC {row.partitionKey}: {row.records} record{'' if row.records == 1 else 's'}, "
                          f"{row.bytes} bytes", flush=True)
                if changed > args.show:
                    print(f"[{NAME}]   ... and {changed - args.show} more windows updated", flush=True)
        finally:
            batch.unpersist()

    writer = (per_window.writeStream.outputMode("update")
              .foreachBatch(write_batch)
              .option("checkpointLocation", args.checkpoint)
              .queryName(NAME))
    query = with_trigger(writer, args).start()
    print(f"[{NAME}] counting {args.stream} per {args.window} window (watermark {args.watermark}) into "
          f"{args.output}", flush=True)
    return run_query(query, NAME)


if __name__ == "__main__":
    sys.exit(main())
