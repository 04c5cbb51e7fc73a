#!/usr/bin/env python3
"""Stops a query while the executors' prefetch buffers are full, then starts another in the same application.

For tests/test_cluster.py (issue 12.6): on a cluster the buffers live in the executors' JVMs, where the driver's
``stop()`` cannot reach them directly. The first query reads slowly (a small ``maxRecordsPerTrigger`` into the
``noop`` sink) while read-ahead fills the buffers up to ``fetchBufferSize``; once the source reports
``fill_bytes`` buffered, it is stopped, and a second query (new checkpoint, ``Trigger.AvailableNow``) reads the
whole stream in the same application.

Usage::

    python tests/drivers/restart_driver.py CONFIG_JSON_FILE

CONFIG: ``master``, ``conf`` (Spark confs), ``source`` (connector options for both queries), ``first`` (options of
the first query only), ``fill_bytes``, ``workdir``, ``result`` (a JSON file written at the end: ``bufferedBytes``
when the first query stopped, ``firstBatchSeconds`` from the second query's start to the end of its first batch
with rows, ``rows`` it read, ``code``), ``timeout`` (seconds for each phase).
Exit codes: 0 both phases done, 1 a query failed or a phase timed out.
"""

from __future__ import annotations

import datetime
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/, for harness

from harness.local_spark import await_query, local_session, run_script, write_atomically  # noqa: E402


def buffered_bytes(query) -> int:
    progress = query.lastProgress
    if not progress or not progress.get("sources"):
        return 0
    return int(progress["sources"][0]["metrics"].get("bufferedBytes", 0))


def batch_end(progress: dict) -> float:
    """When a progress report's trigger ended, in seconds since the epoch."""
    start = datetime.datetime.strptime(progress["timestamp"], "%Y-%m-%dT%H:%M:%S.%fZ")
    start = start.replace(tzinfo=datetime.timezone.utc).timestamp()
    return start + progress["durationMs"]["triggerExecution"] / 1000


def main(config_path: str) -> int:
    config = json.loads(Path(config_path).read_text())
    workdir, timeout = Path(config["workdir"]), float(config["timeout"])
    spark = local_session("spark-kinesis-restart", master=config["master"], conf=config["conf"])
    result: dict = {"code": 1}

    def finish(code: int) -> int:
        result["code"] = code
        write_atomically(config["result"], json.dumps(result))
        spark.stop()
        return code

    source = config["source"]
    first = (spark.readStream.format("kinesis").options(**source, **config["first"]).load()
             .writeStream.format("noop").option("checkpointLocation", str(workdir / "first")).start())
    deadline = time.monotonic() + timeout
    while buffered_bytes(first) < int(config["fill_bytes"]):
        if first.exception() is not None or time.monotonic() > deadline:
            print(f"restart_driver: the first query did not fill its buffers: {first.exception()} "
                  f"{first.lastProgress}", file=sys.stderr)
            return finish(1)
        time.sleep(0.2)
    result["bufferedBytes"] = buffered_bytes(first)
    first.stop()

    started = time.time()
    second = (spark.readStream.format("kinesis").options(**source).load()
              .writeStream.format("noop").option("checkpointLocation", str(workdir / "second"))
              .trigger(availableNow=True).start())
    code, progress = await_query(second, timeout, "restart_driver")
    with_rows = [p for p in progress if p["numInputRows"] > 0]
    result["rows"] = sum(p["numInputRows"] for p in progress)
    result["firstBatchSeconds"] = round(batch_end(with_rows[0]) - started, 2) if with_rows else None
    return finish(code)


if __name__ == "__main__":
    run_script(main, __doc__)
