#!/usr/bin/env python3
"""A standalone PySpark driver that runs one streaming query from the Kinesis source, for crash tests.

tests/test_streaming_exactly_once.py and tests/test_cluster.py start it with ``harness.streaming.Driver``, a subprocess
in its own session, so they can SIGKILL the whole driver (this Python process, the JVM it launches and the JVM's
Python workers) with one ``os.killpg``.

Usage::

    python tests/drivers/streaming_driver.py CONFIG_JSON_FILE

The config file is one JSON object:

* ``master``: Spark master (default ``local[2]``); ``conf``: extra Spark confs (strings).
* ``source``: the connector's options (``streamName``, ``endpointUrl``, ``cborEnabled``, ``initialPosition``, ...).
* ``checkpoint``: the query's checkpoint folder; ``output``: the sink's folder.
* ``sink``: ``parquet`` (Spark's file sink, exactly-once through ``_spark_metadata``) or ``foreach_batch_twice``
  (``foreachBatch`` runs two actions on each batch DataFrame and writes, per batch id, one JSON file with what
  each action saw: ``<output>/batch-<id>.json``, replaced atomically, so a re-run batch overwrites its file).
* ``trigger``: ``{"availableNow": true}``, ``{"processingTime": "500 milliseconds"}`` or ``{}`` (default trigger).
* ``probe`` (optional): a Python UDF evaluated on every row; on the first ``rows`` rows of one partition of every
  batch it writes what it saw to ``markers/<stage>-<partition>-<attempt>.json``, and on attempt 0 it then either
  raises (``action: fail``, for task retries) or sleeps ``sleep`` seconds (``action: sleep``, for speculation).
  Its value (the task attempt number) is written as column ``attempt``.
* ``status``: a folder where the driver writes ``started.json`` once the query runs, ``events.jsonl`` (one line
  per listener event: ``started``, ``progress`` with batch id and row count, ``idle``, ``terminated``) and
  ``progress.json`` (the recent progress) when it ends.
* ``stop_file`` (optional): when this file exists the driver stops the query and exits 0.
* ``max_seconds``: the driver stops the query and exits with code 3 when it is still running after this long.
* ``query_name`` (optional): the query's name.
* ``ui_after_stop`` (optional): a path of the Spark UI (``/metrics/prometheus``, with ``spark.ui.enabled`` in
  ``conf``) the driver fetches once the query has stopped, before it stops Spark, into ``<status>/ui_after_stop.txt``.
  ``started.json`` holds the UI's address (``ui``).

Exit codes: 0 the query ended by itself (AvailableNow) or was stopped cleanly, 1 the query failed, 3 timeout.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/, for harness

from harness.local_spark import (  # noqa: E402
    await_query, local_session, parsed_test_records, run_script, write_atomically,
)


def add_event_log(spark, path: Path) -> None:
    """Appends one JSON line per StreamingQueryListener event to ``path`` (flushed at once)."""
    from pyspark.sql.streaming import StreamingQueryListener

    def log(event: dict) -> None:
        event["time"] = time.time()
        with open(path, "a") as f:
            f.write(json.dumps(event) + "\n")

    class EventLog(StreamingQueryListener):
        def onQueryStarted(self, event):
            log({"event": "started"})

        def onQueryProgress(self, event):
            p = event.progress
            log({"event": "progress", "batchId": p.batchId, "numInputRows": p.numInputRows,
                 "sourceMetrics": [dict(src.metrics) for src in p.sources]})

        def onQueryIdle(self, event):
            log({"event": "idle"})

        def onQueryTerminated(self, event):
            log({"event": "terminated", "exception": event.exception})

    spark.streams.addListener(EventLog())


def make_probe(params: dict):
    """The attempt-aware UDF body; state is per Python worker, keyed by (stage, partition, attempt)."""
    rows = int(params.get("rows", 50))
    partition = int(params.get("partition", 0))
    action = params.get("action", "fail")
    sleep_s = float(params.get("sleep", 20.0))
    markers = params["markers"]
    seen_by_task: dict = {}

    def probe(shard_id, sequence_number, sub_sequence):
        import json as _json
        import os as _os
        import time as _time

        from pyspark import TaskContext

        tc = TaskContext.get()
        key = (tc.stageId(), tc.partitionId(), tc.attemptNumber())
        seen = seen_by_task.setdefault(key, [])
        if tc.partitionId() == partition and len(seen) < rows:
            seen.append([shard_id, sequence_number, sub_sequence])
            if len(seen) == rows:
                name = f"{key[0]}-{key[1]}-{key[2]}.json"
                tmp = _os.path.join(markers, f".{name}.{_os.getpid()}.tmp")
                with open(tmp, "w") as f:
                    _json.dump({"stage": key[0], "partition": key[1], "attempt": key[2],
                                "taskAttemptId": tc.taskAttemptId(), "pid": _os.getpid(), "rows": seen}, f)
                _os.replace(tmp, _os.path.join(markers, name))
                if tc.attemptNumber() == 0:
                    if action == "fail":
                        raise RuntimeError(f"injected failure in attempt 0 of stage {key[0]} partition {key[1]}")
                    _time.sleep(sleep_s)
        return tc.attemptNumber()

    return probe


def main(config_path: str) -> int:
    config = json.loads(Path(config_path).read_text())
    from pyspark.sql import functions as F
    from pyspark.sql.types import IntegerType

    # Keep one _spark_metadata file per batch (no compaction), so the test can map files to batches.
    conf = {"spark.sql.streaming.fileSink.log.compactInterval": "1000000", **config.get("conf", {})}
    spark = local_session("spark-kinesis-crash-driver", config.get("master", "local[2]"), conf)

    output = config["output"]
    status = Path(config["status"])
    status.mkdir(parents=True, exist_ok=True)
    add_event_log(spark, status / "events.jsonl")

    raw = spark.readStream.format("kinesis").options(**config["source"]).load()
    df = parsed_test_records(raw)
    probe = config.get("probe")
    if probe:
        Path(probe["markers"]).mkdir(parents=True, exist_ok=True)
        udf = F.udf(make_probe(probe), IntegerType()).asNondeterministic()
        df = df.withColumn("attempt", udf("shardId", "sequenceNumber", "subSequenceNumber"))

    writer = df.writeStream.option("checkpointLocation", config["checkpoint"])
    if config.get("query_name"):
        writer = writer.queryName(config["query_name"])
    trigger = config.get("trigger", {})
    if trigger.get("availableNow"):
        writer = writer.trigger(availableNow=True)
    elif trigger.get("processingTime"):
        writer = writer.trigger(processingTime=trigger["processingTime"])

    sink = config.get("sink", "parquet")
    if sink == "parquet":
        writer = writer.format("parquet").option("path", output)
    elif sink == "foreach_batch_twice":
        Path(output).mkdir(parents=True, exist_ok=True)
        columns = ["id", "key", "seq", "shardId", "sequenceNumber", "subSequenceNumber"]

        def each_batch(batch_df, batch_id):
            first = sorted(tuple(r) for r in batch_df.select(*columns).collect())
            counted = batch_df.count()
            second = sorted(tuple(r) for r in batch_df.select(*columns).collect())
            a, b = set(first), set(second)
            result = {
                "batch": batch_id,
                "first": len(first),
                "count": counted,
                "second": len(second),
                "identical": first == second and counted == len(first),
                "mismatches": len(a ^ b) + abs(len(first) - len(a)) + abs(len(second) - len(b)),
                "rows": [list(r) for r in first],
            }
            write_atomically(Path(output) / f"batch-{batch_id:06d}.json", json.dumps(result))

        writer = writer.foreachBatch(each_batch)
    else:
        raise SystemExit(f"unknown sink {sink!r}")

    query = writer.start()
    write_atomically(status / "started.json", json.dumps({"pid": os.getpid(), "id": str(query.id),
                                                          "runId": str(query.runId),
                                                          "ui": spark.sparkContext.uiWebUrl}))
    try:
        code, progress = await_query(query, float(config.get("max_seconds", 300)), "streaming_driver", timeout_code=3,
                                     stop_file=config.get("stop_file"))
        write_atomically(status / "progress.json", json.dumps(progress))
        if config.get("ui_after_stop"):
            import urllib.request

            with urllib.request.urlopen(spark.sparkContext.uiWebUrl + config["ui_after_stop"], timeout=30) as answer:
                write_atomically(status / "ui_after_stop.txt", answer.read().decode("utf-8"))
    finally:
        spark.stop()
    return code


if __name__ == "__main__":
    run_script(main, __doc__)
