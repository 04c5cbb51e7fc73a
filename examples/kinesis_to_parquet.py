"""Kinesis to Parquet: archive every record of a stream as Parquet files, partitioned by arrival date (UTC).

Each micro-batch becomes Parquet files under --output, with the record's payload (`data`, binary), its partition
key, stream, shard, sequence numbers and arrival time. The archive is exactly-once: the source fixes every batch's
records in the checkpoint before the batch runs, and Spark's file sink commits each batch once, so a retried or
restarted batch writes the same records and readers never see them twice.

Run it once over what the stream holds now (here against a local server; credentials come from the AWS SDK's
default chain, e.g. AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, a profile or an instance role):

    python examples/kinesis_to_parquet.py --stream orders --region us-east-1 \\
        --endpoint-url http://127.0.0.1:4566 \\
        --checkpoint /tmp/orders-archive/checkpoint --output /tmp/orders-archive/data --available-now

Without --available-now it keeps running, one batch every --trigger-interval, until Ctrl-C; run it again with the
same --checkpoint to continue. On AWS, leave out --endpoint-url and point --checkpoint and --output at durable
storage (any Hadoop path your cluster can write, such as HDFS or S3 through s3a://). Each batch prints a progress
line with its record count and how far behind the stream's tip the query is.
"""

from __future__ import annotations

import sys
from typing import Optional, Sequence

from example_support import make_parser, parse_options, run_query, spark_session, with_trigger

NAME = "kinesis_to_parquet"


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = make_parser(__doc__, "the Parquet folder to write (any Hadoop path)")
    args = parser.parse_args(argv)
    options = parse_options(args.option, parser)

    # Dates of the `arrival_date` partitions are UTC days.
    spark = spark_session(NAME, {"spark.sql.session.timeZone": "UTC"})

    from pyspark.sql import functions as F

    from spark_kinesis import kinesis_stream

    records = kinesis_stream(spark, args.stream, region=args.region, endpoint_url=args.endpoint_url,
                             initial_position=args.initial_position, **options)
    archive = records.withColumn("arrival_date", F.to_date("approximateArrivalTimestamp"))
    writer = (archive.writeStream.format("parquet")
              .option("path", args.output)
              .option("checkpointLocation", args.checkpoint)
              .partitionBy("arrival_date")
              .queryName(NAME))
    query = with_trigger(writer, args).start()
    print(f"[{NAME}] reading {args.stream} into {args.output} (checkpoint {args.checkpoint})", flush=True)
    return run_query(query, NAME)


if __name__ == "__main__":
    sys.exit(main())
