"""`make demo`: the connector end to end against a local Kinesis server, with a reshard while it runs.

1. Starts kinesalite on 127.0.0.1 and creates a 2-shard stream.
2. A writer puts a steady flow of orders (about 300 per second, for 20 seconds).
3. A streaming query reads the stream through the connector (`kinesis_stream`) and keeps a running
   aggregation per customer; every micro-batch prints a progress line with the lag metrics.
4. Halfway through, one shard is split: the query carries on, reading the parent to its end, then the children.
5. At the end the query's totals are compared with what was written: every order counted exactly once.

Run it through `make demo`, which builds the Spark 4 jar and runs this with the package from the source tree.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path
from typing import Any, List, Tuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

# The test harness (tests/harness) starts the local server; it is not type-checked, so mypy sees it as Any.
from harness import local_kinesis, streams  # type: ignore[import-not-found]  # noqa: E402

STREAM = "demo-orders"
RATE = 300          # records per second
SECONDS = 20        # how long the writer writes
QUIET_LIMIT = 120   # beyond SECONDS, how long the query may go without completing a batch before the demo gives up
MAX_SECONDS = 900   # the whole run at most (a busy machine runs each batch slower; a quiet one takes about a minute)
CUSTOMERS = 40


def writer(kinesis: Any, written: List[Tuple[str, str]], stop: threading.Event, split_done: threading.Event) -> None:
    """Writes RATE orders per second for SECONDS seconds, splitting shard 0 halfway."""
    order_id = 0
    started = time.monotonic()
    for second in range(SECONDS):
        if stop.is_set():
            return
        batch = []
        for _ in range(RATE):
            customer = order_id % CUSTOMERS
            batch.append((json.dumps({"order": order_id, "customer": customer, "amount": order_id % 97}),
                          f"customer-{customer}"))
            order_id += 1
        streams.put_records(kinesis, STREAM, batch)
        written.extend(batch)
        if second == SECONDS // 2:
            shard = streams.list_shards(kinesis, STREAM)[0]["ShardId"]
            kinesis.split_shard(StreamName=STREAM, ShardToSplit=shard, NewStartingHashKey=str(2 ** 126))
            streams.wait_active(kinesis, STREAM)
            print(f"[demo] ---- split {shard} while the query runs ----", flush=True)
            split_done.set()
        pause = started + second + 1 - time.monotonic()
        if pause > 0:
            stop.wait(pause)


def main() -> int:
    from pyspark.sql import SparkSession

    from spark_kinesis import configure_spark_with_kinesis, kinesis_stream

    checkpoint = ROOT / "build" / "demo-checkpoint"
    if checkpoint.exists():
        import shutil
        shutil.rmtree(checkpoint)
    with local_kinesis.start("kinesalite") as server:
        print(f"[demo] kinesalite listening at {server.endpoint} (PID {server.pid})")
        kinesis = streams.client(server)
        streams.create_stream(kinesis, STREAM, 2)
        builder = (SparkSession.builder.master("local[2]").appName("spark-kinesis-demo")
                   .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
                   .config("spark.sql.shuffle.partitions", "2")
                   .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1"))
        spark = configure_spark_with_kinesis(builder).getOrCreate()
        spark.sparkContext.setLogLevel("ERROR")
        written: List[Tuple[str, str]] = []
        stop = threading.Event()
        split_done = threading.Event()
        try:
            orders = kinesis_stream(
                spark, STREAM, endpoint_url=server.endpoint, region="us-east-1", initial_position="trim_horizon",
                awsAccessKeyId="demo", awsSecretKey="demo", cborEnabled=False,  # kinesalite mishandles CBOR
                shardDiscoveryInterval="1s",
            )
            per_customer = (orders.selectExpr("CAST(data AS STRING) AS json")
                            .selectExpr("CAST(get_json_object(json, '$.customer') AS INT) AS customer",
                                        "CAST(get_json_object(json, '$.order') AS BIGINT) AS order_id")
                            .groupBy("customer").agg({"*": "count", "order_id": "sum"})
                            .withColumnRenamed("count(1)", "orders").withColumnRenamed("sum(order_id)", "id_sum"))
            query = (per_customer.writeStream.outputMode("complete").format("memory").queryName("demo_totals")
                     .option("checkpointLocation", str(checkpoint)).trigger(processingTime="1 second").start())
            thread = threading.Thread(target=writer, args=(kinesis, written, stop, split_done), daemon=True)
            thread.start()
            print(f"[demo] writing {RATE} orders/s for {SECONDS} s; the query reads them as they arrive")
            print("[demo] (lag is Kinesis' MillisBehindLatest of each shard's last read: kinesalite always "
                  "reports 0 on open shards; AWS and kinesis-mock report the real value)")
            last_batch, last_progress = -1, time.monotonic()
            deadline = time.monotonic() + MAX_SECONDS
            timed_out = True
            while time.monotonic() < deadline and time.monotonic() - last_progress < SECONDS + QUIET_LIMIT:
                for p in query.recentProgress:
                    if p["batchId"] > last_batch:
                        last_batch, last_progress = p["batchId"], time.monotonic()
                        m = p["sources"][0].get("metrics", {})
                        print(f"[demo] batch {p['batchId']:3d}: {p['numInputRows']:5d} records  "
                              f"lag avg {float(m.get('avgMsBehindLatest', 0)):7.1f} ms  "
                              f"max {m.get('maxMsBehindLatest', '0'):>5} ms  "
                              f"open shards {m.get('openShards', '?')}  closed {m.get('closedShards', '?')}",
                              flush=True)
                if not thread.is_alive():
                    rows = spark.table("demo_totals").collect()
                    if sum(r.orders for r in rows) >= len(written):
                        timed_out = False
                        break
                time.sleep(0.5)
            if timed_out:
                print(f"[demo] gave up waiting: the query had not counted every order (no batch for "
                      f"{time.monotonic() - last_progress:.0f} s, or {MAX_SECONDS} s in all)")
            rows = spark.table("demo_totals").collect()
            counted = sum(r.orders for r in rows)
            id_sum = sum(r.id_sum for r in rows)
            n = len(written)
            expected_sum = n * (n - 1) // 2
            print(f"[demo] wrote {n} orders; the query counted {counted} over {len(rows)} customers "
                  f"(order-id checksum {'matches' if id_sum == expected_sum else 'DIFFERS'})")
            print(f"[demo] shard split during the run: {'yes' if split_done.is_set() else 'no'}; shards now: "
                  f"{', '.join(s['ShardId'] for s in streams.list_shards(kinesis, STREAM))}")
            if query.exception() is not None:
                print(f"[demo] the query failed: {query.exception()}")
            ok = counted == n and id_sum == expected_sum and split_done.is_set()
            print("[demo] OK: every order was read exactly once, across the reshard" if ok
                  else "[demo] MISMATCH: see the numbers above")
            query.stop()
            return 0 if ok else 1
        finally:
            stop.set()
            spark.stop()


if __name__ == "__main__":
    sys.exit(main())
