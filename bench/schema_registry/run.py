#!/usr/bin/env python3
"""Decoding Avro payloads: from_glue_schema_registry against Spark's own from_avro (not part of CI).
Results and commands: docs/performance.md, "Typed payloads".

The same --records Avro records (an order: ids, strings, a decimal, a timestamp, an enum, an array and a nullable
field), written once by Spark's to_avro and cached in memory, are decoded in turn by:
* `from_glue_schema_registry` on the framed payloads (the 18-byte Glue Schema Registry header before each: the
  writer version fetched from moto's Glue once per executor), the way a stream's records arrive;
* `from_avro` (Spark's spark-avro module, its jar fetched from Maven Central for this run only) on the same
  payloads without the header;
* `from_glue_schema_registry` with framing=none on those plain payloads, for reference.
Each run decodes every record into the `noop` sink; the runs alternate, --rounds times, after a warm-up of each,
and the median of each is reported with records/s and the ratio to from_avro.

    make bench-schema-registry
    .venv/bin/python bench/schema_registry/run.py [--records 1000000] [--rounds 5] [--plot]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "source"))

from common import ROOT, new_figure, save_figure, spark_session, write_results  # noqa: E402
from harness import moto  # noqa: E402

NAME = "schema-registry-decode"
SCHEMA = {"type": "record", "name": "Order", "namespace": "bench", "fields": [
    {"name": "id", "type": "long"},
    {"name": "customer", "type": "string"},
    {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 2}},
    {"name": "placed", "type": {"type": "long", "logicalType": "timestamp-micros"}},
    {"name": "channel", "type": {"type": "enum", "name": "Channel", "symbols": ["WEB", "APP", "POS"]}},
    {"name": "quantity", "type": "int"},
    {"name": "skus", "type": {"type": "array", "items": "string"}},
    {"name": "note", "type": ["null", "string"], "default": None},
]}
KEYS = {"awsAccessKeyId": "bench-key", "awsSecretKey": "bench-secret", "region": "us-east-1"}


def spark_avro_jar(version: str) -> str:
    """spark-avro of this Spark from Maven Central (the nearest release Maven Central has when there is none)."""
    target = ROOT / "build" / "bench-jars"
    for candidate in (version, "4.2.0" if version.startswith("4.") else version):
        jar = target / f"spark-avro_2.13-{candidate}.jar"
        if not jar.exists():
            result = subprocess.run(["mvn", "-q", "-B", "dependency:copy",
                                     f"-Dartifact=org.apache.spark:spark-avro_2.13:{candidate}:jar",
                                     f"-DoutputDirectory={target}"], capture_output=True, text=True)
            if result.returncode != 0:
                continue
        return str(jar)
    raise RuntimeError(f"no spark-avro jar for Spark {version} on Maven Central")


def timed(action) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--plot", action="store_true")
    args = parser.parse_args()

    import boto3
    import pyspark
    from pyspark.sql import functions as F
    from pyspark.sql.avro.functions import from_avro, to_avro

    import spark_kinesis
    from spark_kinesis import from_glue_schema_registry

    definition = json.dumps(SCHEMA)
    with tempfile.TemporaryDirectory() as tmp, moto.running(Path(tmp)) as endpoint:
        glue = boto3.client("glue", endpoint_url=endpoint, region_name="us-east-1",
                            aws_access_key_id=KEYS["awsAccessKeyId"], aws_secret_access_key=KEYS["awsSecretKey"])
        glue.create_registry(RegistryName="bench")
        version = glue.create_schema(RegistryId={"RegistryName": "bench"}, SchemaName="orders", DataFormat="AVRO",
                                     Compatibility="BACKWARD", SchemaDefinition=definition)["SchemaVersionId"]
        jars = f"{spark_kinesis.jar_path()},{spark_avro_jar(pyspark.__version__)}"
        spark = spark_session("bench-schema-registry", {"spark.driver.memory": "6g",
                                                        "spark.sql.shuffle.partitions": "2"}, jars=jars)
        rows = spark.range(args.records, numPartitions=8).selectExpr(
            "id", "concat('customer-', id % 1000) AS customer", "CAST(id % 100000 / 100 AS DECIMAL(12, 2)) AS amount",
            "timestamp_micros(1700000000000000 + id) AS placed",
            "element_at(array('WEB', 'APP', 'POS'), CAST(id % 3 + 1 AS INT)) AS channel",
            "CAST(id % 7 AS INT) AS quantity", "array(concat('sku-', id % 50), concat('sku-', id % 13)) AS skus",
            "IF(id % 4 = 0, NULL, concat('note ', id)) AS note")
        header = b"\x03\x00" + uuid.UUID(version).bytes
        payloads = rows.select(to_avro(F.struct(*rows.columns), definition).alias("plain")) \
            .select("plain", F.concat(F.lit(header), F.col("plain")).alias("framed"))
        payloads = spark.createDataFrame(payloads.rdd, payloads.schema).persist()
        assert payloads.count() == args.records

        registry = dict(KEYS, registryEndpointUrl=endpoint, registryName="bench", schemaName="orders")
        runs = {
            "from_glue_schema_registry (framed)":
                lambda: payloads.select(from_glue_schema_registry("framed", registry).alias("o")),
            "from_avro (header stripped)":
                lambda: payloads.select(from_avro("plain", definition).alias("o")),
            "from_glue_schema_registry (framing=none)":
                lambda: payloads.select(from_glue_schema_registry("plain", dict(KEYS, schemaDefinition=definition,
                                                                                    framing="none")).alias("o")),
        }
        # The same values from each (a sample), before any timing.
        sample = [sorted(tuple(r) for r in make().select("o.id", "o.customer", "o.amount", "o.channel", "o.note")
                         .where("o.id % 99991 = 7").collect()) for make in runs.values()]
        assert sample[0] == sample[1] == sample[2] and sample[0], "the three decodes disagree"

        def decode(make):
            make().select("o.*").write.format("noop").mode("overwrite").save()

        for make in runs.values():
            decode(make)  # warm-up
        seconds = {name: [] for name in runs}
        for _ in range(args.rounds):
            for name, make in runs.items():
                seconds[name].append(timed(lambda: decode(make)))
        spark.stop()

    base = statistics.median(seconds["from_avro (header stripped)"])
    summary = {"versions": {"pyspark": pyspark.__version__, "spark-kinesis": spark_kinesis.__version__,
                            "records": args.records, "rounds": args.rounds, "cores": 2},
               "runs": [{"decoder": name, "seconds": s, "median_s": round(statistics.median(s), 2),
                         "records_per_s": round(args.records / statistics.median(s)),
                         "rate_vs_from_avro": round(base / statistics.median(s), 2)} for name, s in seconds.items()]}
    print(json.dumps(summary["versions"]))
    print("| decoder | median s | records/s | rate vs from_avro |\n|---|---|---|---|")
    for r in summary["runs"]:
        print(f"| {r['decoder']} | {r['median_s']} | {r['records_per_s']:,} | {r['rate_vs_from_avro']}x |")
    print(f"wrote {write_results(NAME, summary)}")
    if args.plot:
        fig, ax = new_figure()
        names = [r["decoder"].replace(" (", "\n(") for r in summary["runs"]]
        ax.barh(names, [r["records_per_s"] / 1000 for r in summary["runs"]], color=["#2a7", "#888", "#7a2"])
        ax.set_xlabel("thousand records/s (median, local[2])")
        ax.set_title(f"Decoding {args.records:,} Avro records")
        ax.invert_yaxis()
        save_figure(fig, NAME)


if __name__ == "__main__":
    main()
