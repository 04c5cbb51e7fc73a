#!/usr/bin/env python3
"""A real-time mode application for tests/test_cluster.py, run with spark-submit on the standalone cluster.

It reads ``stream`` with ``kinesis_stream`` in real-time mode (Spark 4.1+; batches of ``batchSeconds``) and writes
each record unchanged to ``output`` with the Kinesis sink (``maxRecordDelay``, ``ordering=perKey``), the settings
docs/source.md gives for Kinesis to Kinesis; ``sourceOptions``, when given, are further options of the source.
Once ``output`` holds the ``records`` records put before the start, it splits shard ``split`` of ``stream`` in half
while the query runs and puts the ``later`` records (``[data, key]`` pairs); without ``split`` it does neither. It
stops once ``batches`` batches have completed (each later batch started from the end offset the driver
merged from the executors' tasks) and ``output`` holds every record (counted with boto3), writes ``result`` (JSON:
application id, completed batch ids, records seen) and exits 0; it exits 1 when the query failed or that did not
happen by ``deadline`` (seconds since the epoch). Every ``STATUS_EVERY_S`` it prints where it stands to stderr.

Usage::

    spark-submit --master spark://HOST:PORT --jars "$(python -m spark_kinesis jar)" \\
        tests/drivers/realtime_cluster_app.py CONFIG

CONFIG is a JSON file: ``stream``, ``output``, ``options`` (connector options for both directions), ``endpoint``,
``cborEnabled``, ``records``, ``split`` and ``later`` (optional), ``sourceOptions`` (optional), ``batches``,
``batchSeconds``, ``checkpoint``, ``result``, ``deadline``.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/, for harness

from harness import streams  # noqa: E402
from harness.local_spark import run_script  # noqa: E402

STATUS_EVERY_S = 15.0


class _Server:
    """What harness.streams.client needs of a server."""

    def __init__(self, endpoint: str, cbor_enabled: bool):
        self.endpoint = endpoint
        self.cbor_enabled = cbor_enabled


def main(config_path: str) -> int:
    config = json.loads(Path(config_path).read_text())
    from pyspark.sql import SparkSession

    from spark_kinesis import kinesis_stream, write_kinesis

    spark = (SparkSession.builder.appName("spark-kinesis-realtime-cluster-app")
             .config("spark.sql.streaming.realTimeMode.allowlistCheck", "false").getOrCreate())
    spark.sparkContext.setLogLevel("WARN")
    options = config["options"]
    kinesis = streams.client(_Server(config["endpoint"], bool(config["cborEnabled"])))

    source = kinesis_stream(spark, config["stream"], initial_position="trim_horizon", minFetchPeriod="50ms",
                            **dict(options, **config.get("sourceOptions", {})))
    writer = write_kinesis(source.select("data", "partitionKey"), config["output"], maxRecordDelay="10ms",
                           ordering="perKey", **options)
    assert writer is not None
    query = (writer.option("asyncProgressTrackingEnabled", "false")
             .option("checkpointLocation", config["checkpoint"]).outputMode("update")
             .trigger(realTime=f"{int(config['batchSeconds'])} seconds").start())
    code, seen = 1, 0
    output = streams.Tail(kinesis, config["output"])
    expected, split = int(config["records"]), "split" not in config
    started = time.monotonic()
    deadline = started + float(config["deadline"]) - time.time()
    next_status = started
    try:
        while time.monotonic() < deadline:
            if query.exception() is not None:
                print(f"realtime_cluster_app: the query failed: {query.exception()}", file=sys.stderr)
                break
            seen = output.poll()
            if not split and seen >= expected:
                streams.split_in_half(kinesis, config["stream"], config["split"])
                streams.put_records(kinesis, config["stream"], [tuple(r) for r in config["later"]])
                expected, split = expected + len(config["later"]), True
            if split and len(query.recentProgress) >= int(config["batches"]) and seen >= expected:
                code = 0
                break
            if time.monotonic() >= next_status:
                print(f"realtime_cluster_app: {time.monotonic() - started:.0f} s: output holds {seen} of {expected}, "
                      f"split {split}, {len(query.recentProgress)} batches completed, "
                      f"status {query.status}", file=sys.stderr)
                next_status += STATUS_EVERY_S
            time.sleep(0.5)
        else:
            batches = [(p["batchId"], p["numInputRows"]) for p in query.recentProgress]
            print(f"realtime_cluster_app: timed out: output holds {seen} of {expected}, split {split}, "
                  f"(batch, input rows) completed: {batches}, status {query.status}", file=sys.stderr)
    finally:
        print("realtime_cluster_app: stopping the query", file=sys.stderr)
        query.stop()
    result = {"applicationId": spark.sparkContext.applicationId,
              "batches": [p["batchId"] for p in query.recentProgress], "seen": seen}
    Path(config["result"]).write_text(json.dumps(result))
    spark.stop()
    return code


if __name__ == "__main__":
    run_script(main, __doc__)
