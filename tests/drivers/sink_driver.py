#!/usr/bin/env python3
"""A standalone PySpark driver that streams Spark's rate source into the Kinesis sink, for the sink's kill-and-restart
test (tests/test_sink_streaming.py), run by ``harness.streaming.Driver`` in its own session so that one SIGKILL to
its process group ends it, JVM included, at an arbitrary point of a micro-batch.

Usage::

    python tests/drivers/sink_driver.py CONFIG_JSON_FILE

The config file is one JSON object:

* ``sink``: the connector's options (``streamName``, ``endpointUrl``, ...).
* ``checkpoint``: the query's checkpoint folder.
* ``rows_per_second``: the rate source's rate (two partitions); each row is written as ``data`` its value and
  ``partitionKey`` its value modulo 16. Trigger: every 300 ms.
* ``stop_file``: when this file exists the driver stops the query and exits 0.
* ``status``: a folder where ``started.json`` is written once the query runs.
* ``max_seconds``: the driver stops the query and exits 3 when it is still running after this long (default 300).

Exit codes: 0 stopped cleanly, 1 the query failed, 3 timeout.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/, for harness

from harness.local_spark import await_query, local_session, run_script, write_atomically  # noqa: E402


def main(config_path: str) -> int:
    config = json.loads(Path(config_path).read_text())
    spark = local_session("sink-kill-restart")
    spark.sparkContext.setLogLevel("ERROR")
    status = Path(config["status"])
    status.mkdir(parents=True, exist_ok=True)
    query = (spark.readStream.format("rate").option("rowsPerSecond", int(config["rows_per_second"]))
             .option("numPartitions", 2).load()
             .selectExpr("CAST(value AS STRING) AS data", "CAST(value % 16 AS STRING) AS partitionKey")
             .writeStream.format("kinesis").options(**config["sink"])
             .option("checkpointLocation", config["checkpoint"])
             .trigger(processingTime="300 milliseconds").start())
    write_atomically(status / "started.json", json.dumps({"pid": os.getpid(), "id": str(query.id)}))
    print("started", flush=True)
    try:
        code, _ = await_query(query, float(config.get("max_seconds", 300)), "sink_driver", timeout_code=3,
                              stop_file=config.get("stop_file"))
    finally:
        spark.stop()
    print("stopped" if code == 0 else f"exit {code}", flush=True)
    return code


if __name__ == "__main__":
    run_script(main, __doc__)
