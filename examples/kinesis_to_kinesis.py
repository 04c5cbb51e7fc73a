"""Kinesis to Kinesis: parse JSON orders, keep the paid ones, re-key them by customer, write them to another stream.

Input records are JSON orders such as {"order_id": "o-17", "customer": "c-3", "amount": 12.5, "status": "paid"}.
The pipeline keeps orders with status "paid" and an amount of at least --min-amount, and writes to the --output
stream one record per order:

    data          {"order_id":"o-17","customer":"c-3","amount_cents":1250,"source_shard":"shardId-...",
                   "source_sequence":"4960..."}
    partitionKey  the customer, so each customer's orders go to one shard, in order

Records that are not JSON objects, or lack an order id, a customer or an amount, are dropped. The sink is
at-least-once (a retried batch or task writes its records again), so each output record carries deterministic
ids (`order_id`, and the source shard and sequence number) that a consumer can de-duplicate on.

Run it once over what the stream holds now (here against a local server; credentials come from the AWS SDK's
default chain):

    python examples/kinesis_to_kinesis.py --stream orders --output paid-orders --region us-east-1 \\
        --endpoint-url http://127.0.0.1:4566 --checkpoint /tmp/paid-orders/checkpoint --available-now

Without --available-now it runs until Ctrl-C, a batch every --trigger-interval; run it again with the same
--checkpoint to continue. --option sets source options, --sink-option sink options (docs/options.md).
"""

from __future__ import annotations

import sys
from typing import Optional, Sequence

from example_support import make_parser, parse_options, run_query, spark_session, with_trigger

NAME = "kinesis_to_kinesis"
ORDER = "order_id STRING, customer STRING, amount DOUBLE, status STRING"


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = make_parser(__doc__, "the stream to write to (name or ARN)")
    parser.add_argument("--min-amount", type=float, default=0.0,
                        help="keep paid orders of at least this amount (default: 0)")
    parser.add_argument("--sink-option", action="append", default=[], metavar="NAME=VALUE",
                        help="an option of the Kinesis sink, e.g. ordering=perKey or cborEnabled=false; "
                             "repeat for several")
    args = parser.parse_args(argv)
    source_options = parse_options(args.option, parser)
    sink_options = parse_options(args.sink_option, parser)

    spark = spark_session(NAME)

    from pyspark.sql import functions as F

    from spark_kinesis import kinesis_stream, write_kinesis

    orders = kinesis_stream(spark, args.stream, region=args.region, endpoint_url=args.endpoint_url,
                            initial_position=args.initial_position, **source_options)
    parsed = orders.select(F.from_json(F.col("data").cast("string"), ORDER).alias("o"), "shardId", "sequenceNumber")
    paid = parsed.where(
        (F.col("o.status") == "paid") & (F.col("o.amount") >= F.lit(args.min_amount))
        & F.col("o.order_id").isNotNull() & F.col("o.customer").isNotNull())
    out = paid.select(
        F.to_json(F.struct(
            F.col("o.order_id").alias("order_id"),
            F.col("o.customer").alias("customer"),
            F.round(F.col("o.amount") * 100).cast("long").alias("amount_cents"),
            F.col("shardId").alias("source_shard"),
            F.col("sequenceNumber").alias("source_sequence"))).alias("data"),
        F.col("o.customer").alias("partitionKey"))

    # A streaming DataFrame gets its DataStreamWriter back (a batch one is written at once, and gets None).
    writer = write_kinesis(out, args.output, region=args.region, endpoint_url=args.endpoint_url, **sink_options)
    assert writer is not None
    query = with_trigger(writer.option("checkpointLocation", args.checkpoint).queryName(NAME), args).start()
    print(f"[{NAME}] reading {args.stream}, writing paid orders to {args.output} (checkpoint {args.checkpoint})",
          flush=True)
    return run_query(query, NAME)


if __name__ == "__main__":
    sys.exit(main())
