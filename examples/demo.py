"""`make demo`: the connector end to end against a local Kinesis server.

Starts kinesalite on 127.0.0.1, creates a 4-shard stream, writes records with `write_kinesis`, reads them back
with `read_kinesis`, prints a summary, and stops the server. Run it through `make demo`, which builds and
installs the wheel first.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from harness import local_kinesis, streams  # noqa: E402

N = 5_000
STREAM = "demo-orders"


def main() -> int:
    from pyspark.sql import SparkSession

    from spark_kinesis import configure_spark_with_kinesis, read_kinesis, write_kinesis

    with local_kinesis.start("kinesalite") as server:
        print(f"[demo] kinesalite listening at {server.endpoint} (PID {server.pid})")
        kinesis = streams.client(server)
        streams.create_stream(kinesis, STREAM, 4)
        options = {
            "endpoint_url": server.endpoint,
            "region": "us-east-1",
            "awsAccessKeyId": "demo",
            "awsSecretKey": "demo",
            "cborEnabled": False,  # kinesalite mishandles CBOR
        }
        builder = (SparkSession.builder.master("local[2]").appName("spark-kinesis-demo")
                   .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
                   .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1"))
        spark = configure_spark_with_kinesis(builder).getOrCreate()
        spark.sparkContext.setLogLevel("ERROR")
        try:
            orders = spark.range(N).selectExpr(
                "CAST(id % 50 AS STRING) AS partitionKey",
                "to_json(named_struct('order', id, 'customer', id % 50, 'amount', round(rand(7) * 100, 2))) AS data",
            )
            started = time.monotonic()
            write_kinesis(orders, STREAM, **options)
            print(f"[demo] wrote {N} records with df.write.format('kinesis') in {time.monotonic() - started:.1f} s")

            started = time.monotonic()
            df = read_kinesis(spark, STREAM, **options)
            per_shard = df.groupBy("shardId").count().orderBy("shardId").collect()
            total = sum(r["count"] for r in per_shard)
            distinct = df.selectExpr("get_json_object(CAST(data AS STRING), '$.order') AS o").distinct().count()
            print(f"[demo] read {total} records ({distinct} distinct orders) with spark.read.format('kinesis') "
                  f"in {time.monotonic() - started:.1f} s")
            for r in per_shard:
                print(f"[demo]   {r['shardId']}: {r['count']} records")
            df.selectExpr("CAST(data AS STRING) AS data", "partitionKey", "shardId", "sequenceNumber",
                          "approximateArrivalTimestamp").show(5, truncate=60)
            ok = total == N and distinct == N
            print(f"[demo] {'OK' if ok else 'MISMATCH'}: every record written was read back exactly once" if ok
                  else f"[demo] MISMATCH: wrote {N}, read {total} ({distinct} distinct)")
            return 0 if ok else 1
        finally:
            spark.stop()


if __name__ == "__main__":
    sys.exit(main())
