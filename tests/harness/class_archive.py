"""Builds a class-data-sharing archive of the classes a PySpark driver JVM loads, for `make test`'s lanes.

Starting a Spark driver costs most of its CPU in loading and verifying Spark's classes; the test suites start dozens
of drivers (driver scripts killed and restarted, spark-submit, Spark Connect servers). A JVM given this archive
(`-XX:SharedArchiveFile`) maps those classes instead: a PySpark session's first jobs take about half the CPU. The
archive holds the classes of the JVM that wrote it (Spark's own jars, loaded by the application class loader), so it
serves the JVMs PySpark starts from the same installation with the same JVM; any other JVM (the standalone cluster's
daemons and executors, sbt's forked suites) finds a class path that does not match and runs as without it.

    python tests/harness/class_archive.py OUT.jsa

runs a short local workload (a batch job with a shuffle, a Parquet write and read, a streaming query of two
micro-batches) in a JVM started with `-XX:ArchiveClassesAtExit=OUT.jsa`, and checks the archive was written. The
JVM options in JAVA_TOOL_OPTIONS apply to it as to the JVMs that will use the archive.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path


def train(archive: Path) -> None:
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    partial = archive.with_name(archive.name + ".partial")
    partial.unlink(missing_ok=True)
    spark = (SparkSession.builder.master("local[2]").appName("class-archive")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.sql.shuffle.partitions", "2")
             .config("spark.driver.extraJavaOptions", f"-XX:ArchiveClassesAtExit={partial} -Xlog:cds=off")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    with tempfile.TemporaryDirectory() as work:
        counts = spark.range(20_000).selectExpr("id % 10 AS k", "id").groupBy("k").count()
        assert counts.count() == 10
        counts.write.parquet(f"{work}/counts")
        assert spark.read.parquet(f"{work}/counts").count() == 10
        batches = []
        query = (spark.readStream.format("rate").option("rowsPerSecond", 50).load()
                 .writeStream.option("checkpointLocation", f"{work}/checkpoint")
                 .foreachBatch(lambda df, batch_id: batches.append(df.count()))
                 .trigger(processingTime="200 milliseconds").start())
        try:
            query.awaitTermination(1)
            while len(batches) < 2 and query.isActive:
                query.awaitTermination(0.2)
        finally:
            query.stop()
    from pyspark import SparkContext

    gateway = SparkContext._gateway
    spark.stop()
    # The JVM writes the archive as it exits, which it does when its standard input (a pipe from PySpark) closes.
    gateway.shutdown()
    gateway.proc.stdin.close()
    code = gateway.proc.wait(timeout=300)
    if not partial.is_file():
        raise SystemExit(f"the driver JVM exited with {code} and wrote no archive at {partial}")
    partial.replace(archive)
    print(f"{archive}: {archive.stat().st_size // 2**20} MiB")


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: class_archive.py OUT.jsa", file=sys.stderr)
        return 2
    archive = Path(sys.argv[1]).resolve()
    archive.parent.mkdir(parents=True, exist_ok=True)
    train(archive)
    return 0


if __name__ == "__main__":
    sys.exit(main())
