#!/usr/bin/env python3
"""A standalone PySpark driver for tests/test_ordered_realtime.py: real-time queries (PySpark 4.2+) that copy one
Kinesis stream into others, each with sink options of its own, run by ``harness.streaming.Driver`` in its own
session so that one SIGKILL to its process group ends it, JVM included.

Usage::

    python tests/drivers/ordered_realtime_driver.py CONFIG_JSON_FILE

The config file is one JSON object:

* ``connection``: the connector's options that reach the server (``endpointUrl``, ``region``, keys, ...).
* ``input``: the stream read (from its trim horizon); ``batch_duration``: the real-time batch length.
* ``outputs``: a list of ``{"stream", "sink", "checkpoint"}``: for each, a query writing ``data`` and
  ``partitionKey`` unchanged to ``stream`` with the sink options ``sink``, its checkpoint in ``checkpoint``.
* ``slots``: task slots (``local[N]``): a real-time batch holds one per shard read, per query.
* ``stop_file``: when this file exists the driver stops the queries and exits 0.
* ``status``: a folder where ``started.json`` is written once the queries run.
* ``max_seconds``: the driver stops the queries and exits 3 when they are still running after this long.

Exit codes: 0 stopped cleanly, 1 a query failed, 3 timeout.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/, for harness

from harness.local_spark import local_session, run_script, write_atomically  # noqa: E402


def main(config_path: str) -> int:
    config = json.loads(Path(config_path).read_text())
    spark = local_session("ordered-realtime", master=f"local[{config['slots']}]",
                          conf={"spark.sql.streaming.realTimeMode.allowlistCheck": "false"})
    status = Path(config["status"])
    status.mkdir(parents=True, exist_ok=True)
    source = (spark.readStream.format("kinesis")
              .options(**config["connection"], streamName=config["input"], initialPosition="trim_horizon",
                       minFetchPeriod="50ms")
              .load().select("data", "partitionKey"))
    queries = [source.writeStream.format("kinesis")
               .options(**config["connection"], streamName=out["stream"], maxRecordDelay="10ms", **out["sink"])
               .option("checkpointLocation", out["checkpoint"])
               .option("_asyncProgressTrackingOverrideSinkSupportCheck", "true")
               .outputMode("update").trigger(realTime=config["batch_duration"]).start()
               for out in config["outputs"]]
    write_atomically(status / "started.json", json.dumps({"pid": os.getpid(), "ids": [str(q.id) for q in queries]}))
    print("started", flush=True)
    code = 0
    deadline = time.monotonic() + float(config.get("max_seconds", 300))
    try:
        while not os.path.exists(config["stop_file"]):
            failed = [q for q in queries if q.exception() is not None or not q.isActive]
            if failed:
                print(f"ordered_realtime_driver: a query ended: {failed[0].exception()}", file=sys.stderr)
                code = 1
                break
            if time.monotonic() > deadline:
                print("ordered_realtime_driver: the queries were still running; stopping them", file=sys.stderr)
                code = 3
                break
            time.sleep(0.2)
    finally:
        for q in queries:
            if q.isActive:
                q.stop()
        spark.stop()
    print("stopped" if code == 0 else f"exit {code}", flush=True)
    return code


if __name__ == "__main__":
    run_script(main, __doc__)
