#!/usr/bin/env python3
"""Sink benchmark: rows/s of ``df.write.format("kinesis")`` against a plain SDK 2.x PutRecords loop.

Both write the same records (same count, size, keys and calls of 500 entries) into kinesalite, the fastest
local server, on a fresh stream each, and each run is repeated; the best run of each counts. Not part of CI.

    make install-wheel && .venv/bin/python bench/sink/run.py [--records 200000] [--size 100] [--repeat 3]

Prints one JSON line per run and a summary; docs/performance.md ("Sink") has the latest numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from harness import local_kinesis, streams  # noqa: E402

PLAIN_TIMEOUT_S = 600


def plain_loop(server, stream, args, jar) -> float:
    import pyspark

    # The assembly leaves logging to Spark: take slf4j from PySpark's jars, as a Spark application would.
    slf4j = sorted(str(p) for p in (Path(pyspark.__file__).parent / "jars").glob("slf4j-api-*.jar"))
    classpath = os.pathsep.join([jar, *slf4j])
    command = [shutil.which("java") or "java", "-cp", classpath, str(Path(__file__).with_name("PlainPutRecords.java")),
               server.endpoint, stream, str(args.records), str(args.size), "500", str(args.in_flight * args.partitions)]
    out = subprocess.run(command, check=True, capture_output=True, text=True, timeout=PLAIN_TIMEOUT_S).stdout
    result = json.loads(out.strip().splitlines()[-1])
    return result["recordsPerSecond"]


def spark_write(spark, server, stream, args) -> float:
    df = (spark.range(0, args.records, 1, args.partitions)
          .selectExpr(f"repeat('x', {args.size}) AS data", "concat('k', CAST(id % 1024 AS STRING)) AS partitionKey")
          .cache())
    df.count()  # generate the rows before the clock starts
    options = {"endpointUrl": server.endpoint, "region": "us-east-1", "awsAccessKeyId": "bench",
               "awsSecretKey": "bench", "cborEnabled": "false", "streamName": stream,
               "maxInFlightRequests": str(args.in_flight)}
    start = time.monotonic()
    df.write.format("kinesis").options(**options).mode("append").save()
    seconds = time.monotonic() - start
    df.unpersist()
    return args.records / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--size", type=int, default=100, help="data bytes per record")
    parser.add_argument("--partitions", type=int, default=2, help="Spark tasks (local[N] cores)")
    parser.add_argument("--in-flight", type=int, default=4, help="maxInFlightRequests per task")
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    os.environ.setdefault("AWS_EC2_METADATA_DISABLED", "true")
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    from spark_kinesis import configure_spark_with_kinesis, jar_path

    builder = (SparkSession.builder.master(f"local[{args.partitions}]").appName("sink-bench")
               .config("spark.ui.enabled", "false").config("spark.driver.host", "127.0.0.1")
               .config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.memory", "2g")
               .config("spark.ui.showConsoleProgress", "false"))
    spark = configure_spark_with_kinesis(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    plain, sink = [], []
    with local_kinesis.start(local_kinesis.KINESALITE) as server:
        kinesis = streams.client(server)
        for run in range(args.repeat):
            for name, runner, results in (("plain", lambda s: plain_loop(server, s, args, str(jar_path())), plain),
                                          ("sink", lambda s: spark_write(spark, server, s, args), sink)):
                stream = f"bench-{name}-{uuid.uuid4().hex[:8]}"
                streams.create_stream(kinesis, stream, args.shards)
                rate = runner(stream)
                results.append(rate)
                print(json.dumps({"run": run, "writer": name, "records": args.records, "size": args.size,
                                  "recordsPerSecond": round(rate)}), flush=True)
                kinesis.delete_stream(StreamName=stream)
    spark.stop()
    best_plain, best_sink = max(plain), max(sink)
    print(json.dumps({"plainBest": round(best_plain), "sinkBest": round(best_sink),
                      "sinkOverPlain": round(best_sink / best_plain, 3)}))


if __name__ == "__main__":
    main()
