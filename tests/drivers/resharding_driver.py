#!/usr/bin/env python3
"""A standalone PySpark driver for the resharding tests (tests/test_resharding.py), run by ``harness.streaming.Driver``.

The tests start it as a subprocess in its own session (``start_new_session=True``), so one ``os.killpg`` with
SIGKILL ends the whole driver (this Python process and the JVM it launches) at a chosen point of the
checkpoint's life, or they ask it to stop cleanly by creating the ``stop_file``.

Usage::

    python tests/drivers/resharding_driver.py CONFIG_JSON_FILE

The config file is one JSON object:

* ``master``: Spark master (default ``local[2]``); ``conf``: extra Spark confs.
* ``source``: the connector's options (``streamName``, ``endpointUrl``, ...).
* ``checkpoint``: the query's checkpoint folder.
* ``output``: a folder; ``foreachBatch`` writes ``batch-<id>.json`` per batch id (replaced atomically, so a batch
  re-run after a crash overwrites its file: an idempotent sink keyed by batch id), holding
  ``{"batch", "pid", "time", "rows": [[data, partitionKey, shardId, sequenceNumber, subSequenceNumber], ...]}``,
  and appends one line per execution to ``runs.log`` (``{"batch", "pid", "rows", "time"}``) so the test sees
  which batches ran twice.
* ``trigger_ms``: processing-time trigger interval (default 500).
* ``batch_sleep``: seconds to sleep in ``foreachBatch`` after the batch file is written, before Spark commits
  the batch (widens the "planned and run but not committed" window of crash tests). Default 0.
* ``stop_file``: when this file exists the driver stops the query and exits 0.
* ``status``: a folder where ``started.json`` is written once the query runs.
* ``max_seconds``: the driver stops the query and exits 3 when it is still running after this long.

Exit codes: 0 stopped cleanly, 1 the query failed, 3 timeout.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/, for harness

from harness.local_spark import await_query, local_session, run_script, write_atomically  # noqa: E402


def main(config_path: str) -> int:
    config = json.loads(Path(config_path).read_text())
    spark = local_session("spark-kinesis-resharding-driver", config.get("master", "local[2]"), config.get("conf", {}))

    output = Path(config["output"])
    output.mkdir(parents=True, exist_ok=True)
    status = Path(config["status"])
    status.mkdir(parents=True, exist_ok=True)
    stop_file = Path(config["stop_file"]) if config.get("stop_file") else None
    batch_sleep = float(config.get("batch_sleep", 0))
    runs_log = output / "runs.log"

    df = spark.readStream.format("kinesis").options(**config["source"]).load().selectExpr(
        "CAST(data AS STRING) AS data", "partitionKey", "shardId", "sequenceNumber", "subSequenceNumber")

    def each_batch(batch_df, batch_id):
        rows = [[r.data, r.partitionKey, r.shardId, r.sequenceNumber, r.subSequenceNumber]
                for r in batch_df.collect()]
        now = time.time()
        write_atomically(output / f"batch-{batch_id:06d}.json",
                          json.dumps({"batch": batch_id, "pid": os.getpid(), "time": now, "rows": rows}))
        with open(runs_log, "a") as f:
            f.write(json.dumps({"batch": batch_id, "pid": os.getpid(), "rows": len(rows), "time": now}) + "\n")
        if batch_sleep > 0:
            time.sleep(batch_sleep)

    query = (df.writeStream.foreachBatch(each_batch)
             .option("checkpointLocation", config["checkpoint"])
             .trigger(processingTime=f"{int(config.get('trigger_ms', 500))} milliseconds")
             .start())
    write_atomically(status / "started.json", json.dumps({"pid": os.getpid(), "id": str(query.id),
                                                          "runId": str(query.runId)}))
    try:
        code, _ = await_query(query, float(config.get("max_seconds", 300)), "resharding_driver", timeout_code=3,
                              stop_file=stop_file)
    finally:
        spark.stop()
    return code


if __name__ == "__main__":
    run_script(main, __doc__)
