#!/usr/bin/env python3
"""A small PySpark application for tests/test_cluster.py, run with spark-submit on a standalone cluster.

It takes the connector from ``spark-submit --jars`` (not from ``configure_spark_with_kinesis``, the pip path), then

1. writes ``records`` rows to a Kinesis stream with ``write_kinesis`` (batch; rows spread over four tasks by key,
   ``ordering=perKey``), each row's data the JSON ``{"id", "key", "seq"}`` with ``seq`` increasing per key;
2. reads the stream with ``kinesis_stream`` from ``trim_horizon`` in a streaming query with
   ``Trigger.AvailableNow`` into a Parquet sink (one ``_spark_metadata`` file per batch: no compaction);
3. writes ``result`` (JSON: application id, batches and rows from the query's progress) and exits 0, or exits 1
   when the query failed or did not end in ``timeout`` seconds.

With ``dynamodbTable`` in CONFIG it writes nothing and reads that table's change stream with ``dynamodb_stream``
instead (``options``: the connection to DynamoDB Streams), each change's new image holding the test record's
``id``, ``key`` and ``seq``.

Usage::

    spark-submit --master spark://HOST:PORT --jars "$(python -m spark_kinesis jar)" tests/drivers/cluster_app.py CONFIG

CONFIG is a JSON file: ``stream``, ``options`` (connector options for both directions: ``endpointUrl``, ``region``,
credentials, ``cborEnabled``), ``records``, ``keys``, ``maxRecordsPerTrigger``, ``checkpoint``, ``output``,
``result``, ``timeout``; ``dynamodbTable`` (optional).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/, for harness

from harness.local_spark import await_query, parsed_test_records, run_script  # noqa: E402


def main(config_path: str) -> int:
    config = json.loads(Path(config_path).read_text())
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    from spark_kinesis import dynamodb_stream, from_dynamodb_json, kinesis_stream, write_kinesis

    spark = (SparkSession.builder.appName("spark-kinesis-cluster-app")
             .config("spark.sql.streaming.fileSink.log.compactInterval", "1000000")
             .getOrCreate())
    spark.sparkContext.setLogLevel("WARN")
    options = config["options"]
    records, keys = int(config["records"]), int(config["keys"])

    if "dynamodbTable" in config:
        changes = dynamodb_stream(spark, config["dynamodbTable"], initial_position="trim_horizon",
                                  maxRecordsPerTrigger=config["maxRecordsPerTrigger"], **options)
        image = from_dynamodb_json("newImage", "id BIGINT, pk STRING, seq BIGINT")
        parsed = changes.select(image.id.alias("id"), image.pk.alias("key"), image.seq.alias("seq"),
                                image.pk.alias("partitionKey"), "shardId", "sequenceNumber",
                                F.lit(0).alias("subSequenceNumber"))
    else:
        rows = (spark.range(0, records, numPartitions=4)
                .withColumn("key", F.concat(F.lit("k"), (F.col("id") % keys).cast("string")))
                .withColumn("seq", (F.col("id") / keys).cast("long")))
        data = (rows.repartition(4, "key").sortWithinPartitions("key", "seq")
                .select(F.to_json(F.struct("id", "key", "seq")).alias("data"), F.col("key").alias("partitionKey")))
        write_kinesis(data, config["stream"], ordering="perKey", **options)
        raw = kinesis_stream(spark, config["stream"], initial_position="trim_horizon",
                             maxRecordsPerTrigger=config["maxRecordsPerTrigger"], **options)
        parsed = parsed_test_records(raw)
    query = (parsed.writeStream.format("parquet").option("path", config["output"])
             .option("checkpointLocation", config["checkpoint"]).trigger(availableNow=True).start())
    code, progress = await_query(query, float(config["timeout"]), "cluster_app")
    result = {
        "applicationId": spark.sparkContext.applicationId,
        "batches": [p["batchId"] for p in progress if p["numInputRows"] > 0],
        "rows": sum(p["numInputRows"] for p in progress),
    }
    Path(config["result"]).write_text(json.dumps(result))
    spark.stop()
    return code


if __name__ == "__main__":
    run_script(main, __doc__)
