"""What a streaming query reports and how it is bounded: source metrics, Trigger.AvailableNow and the
admission limits (issue 3, Done when 3), secrets kept out of plans, progress, errors and logs, and the metrics
that leave the process: Spark's metrics system and CloudWatch (issue 40, item 3)."""

from __future__ import annotations

import contextlib
import datetime
import io
import json
import os
import re
import urllib.request
import uuid
from typing import Dict, List

import pytest

from conftest import connector_options
from harness import checkpoint as spark_log
from harness import cloudwatch_cbor, moto, streams
from harness.streaming import STREAMING_DRIVER, Writer, drivers  # noqa: F401 (drivers is a fixture)
from harness.waiting import QUERY_END_S, wait_for

METRIC_KEYS = {
    "avgMsBehindLatest", "maxMsBehindLatest", "minMsBehindLatest", "bufferedRecords", "bufferedBytes",
    "openShards", "closedShards", "getRecordsCalls", "throttledCalls", "driverGetRecordsCalls",
}


def _options(server, stream, **extra):
    return dict(connector_options(server), streamName=stream, **{k: str(v) for k, v in extra.items()})


def _reader(spark, server, stream, **extra):
    return spark.readStream.format("kinesis").options(**_options(server, stream, **extra)).load()


def _run_available_now(df, checkpoint, timeout=QUERY_END_S):
    """Runs an AvailableNow query into foreachBatch; returns (batches as (id, rows), the query)."""
    batches = []

    def collect(batch, batch_id):
        batches.append((batch_id, batch.selectExpr("CAST(data AS STRING) AS data", "partitionKey",
                                                   "stream").collect()))

    query = (df.writeStream.foreachBatch(collect).option("checkpointLocation", checkpoint)
             .trigger(availableNow=True).start())
    try:
        assert query.awaitTermination(timeout), "AvailableNow query did not finish"
        assert query.exception() is None, query.exception()
    finally:
        query.stop()
    return batches, query


# ---------------------------------------------------------------------------------------------
# Metrics
# ---------------------------------------------------------------------------------------------

def test_source_metrics_after_reading(spark, local_kinesis_server, stream_name, tmp_path):
    shards = 3
    kinesis = streams.client(local_kinesis_server)
    streams.create_stream(kinesis, stream_name, shards)
    # Every record weighs 9 bytes (7 of data, 2 of partition key), so buffered bytes = 9 x buffered records.
    streams.put_records(kinesis, stream_name, [(f"m-{i:05d}", f"k{i % 10}") for i in range(900)])

    df = _reader(spark, local_kinesis_server, stream_name, initialPosition="trim_horizon", maxRecordsPerTrigger=300)
    batches, query = _run_available_now(df, str(tmp_path / "cp"))
    progress = [p for p in query.recentProgress if p["numInputRows"] > 0]
    assert sum(p["numInputRows"] for p in progress) == 900
    assert len(progress) >= 3

    for p in progress:
        m = p["sources"][0]["metrics"]
        assert set(m) >= METRIC_KEYS, sorted(set(METRIC_KEYS) - set(m))
        values = {k: float(m[k]) for k in METRIC_KEYS}  # every one a number
        assert values["openShards"] == shards, m
        assert values["closedShards"] == 0, m
        assert all(values[k] >= 0 for k in METRIC_KEYS), m
        assert values["minMsBehindLatest"] <= values["avgMsBehindLatest"] <= values["maxMsBehindLatest"], m
        assert values["getRecordsCalls"] > 0, m
        assert values["throttledCalls"] == 0, m  # nothing throttles a local server
        assert values["bufferedBytes"] == 9 * values["bufferedRecords"], m
        # What is buffered lies beyond this batch: never more than what the stream holds after it.
        assert values["bufferedRecords"] <= 900 - sum(q["numInputRows"] for q in progress[:progress.index(p) + 1])

    first, last = (progress[0]["sources"][0]["metrics"], progress[-1]["sources"][0]["metrics"])
    # The prefetcher read ahead of the first batch (one GetRecords call per shard returns all 300 records,
    # the batch takes 100 of each), and nothing is left once the stream has been read to its end.
    assert int(first["bufferedRecords"]) > 0, first
    assert int(last["bufferedRecords"]) == 0 and int(last["bufferedBytes"]) == 0, last
    calls = [int(p["sources"][0]["metrics"]["getRecordsCalls"]) for p in progress]
    assert calls == sorted(calls), calls


# ---------------------------------------------------------------------------------------------
# Trigger.AvailableNow and admission limits
# ---------------------------------------------------------------------------------------------

def test_available_now_over_several_streams_reads_what_was_there(spark, kinesalite_server, stream_name, tmp_path):
    kinesis = streams.client(kinesalite_server)
    names = [f"{stream_name}-{s}" for s in ("a", "b", "c")]
    before = {}
    for name, shards, count in zip(names, (2, 1, 3), (300, 120, 240)):
        streams.create_stream(kinesis, name, shards)
        before[name] = [(f"{name}/before-{i}", f"k{i % 17}") for i in range(count)]
        streams.put_records(kinesis, name, before[name])

    batches = []

    def collect(batch, batch_id):
        batches.append(batch.selectExpr("CAST(data AS STRING) AS data", "partitionKey", "stream").collect())

    # Six shards, 60 rows per batch: the query is still running when the later records are written.
    df = _reader(spark, kinesalite_server, ",".join(names), initialPosition="trim_horizon", maxRecordsPerTrigger=60)
    query = (df.writeStream.foreachBatch(collect).option("checkpointLocation", str(tmp_path / "cp"))
             .trigger(availableNow=True).start())
    try:
        wait_for(lambda: batches or not query.isActive, 120, "the first batch")
        assert query.isActive, "the query finished before records could be written behind it"
        for name in names:
            streams.put_records(kinesis, name, [(f"{name}/after-{i}", "late") for i in range(30)])
        assert query.awaitTermination(QUERY_END_S), "AvailableNow query did not finish"
        assert query.exception() is None, query.exception()
    finally:
        query.stop()

    rows = [r for b in batches for r in b]
    assert len(rows) == sum(len(v) for v in before.values())
    for name in names:
        got = sorted((r.data, r.partitionKey) for r in rows if r.stream == name)
        assert got == sorted(before[name]), name
    assert all(r.data.startswith(f"{r.stream}/before-") for r in rows)
    assert sum(p["numInputRows"] for p in query.recentProgress) == len(rows)


def test_max_records_and_max_bytes_per_trigger_together_bound_every_batch(spark, kinesalite_server, stream_name,
                                                                          tmp_path):
    kinesis = streams.client(kinesalite_server)
    streams.create_stream(kinesis, stream_name, 3)
    # Mostly small records, where the record limit binds, and a run of 2 kB ones, where the byte limit does.
    records = [(f"{i:05d}-" + ("y" * 2000 if 600 <= i < 900 else "s" * 40), f"key-{i % 29:02d}")
               for i in range(2400)]
    streams.put_records(kinesis, stream_name, records)
    max_records, max_bytes = 250, 60_000  # 250 is not a multiple of the shard count

    df = _reader(spark, kinesalite_server, stream_name, initialPosition="trim_horizon",
                 maxRecordsPerTrigger=max_records, maxBytesPerTrigger=max_bytes)
    batches, query = _run_available_now(df, str(tmp_path / "cp"))
    sizes = [(len(rows), sum(len(r.data) + len(r.partitionKey) for r in rows)) for _, rows in batches]
    got = sorted((r.data, r.partitionKey) for _, rows in batches for r in rows)
    assert got == sorted(records)  # every record, once

    assert all(n <= max_records for n, _ in sizes), f"a batch over maxRecordsPerTrigger={max_records}: {sizes}"
    assert all(b <= max_bytes for _, b in sizes), f"a batch over maxBytesPerTrigger={max_bytes}: {sizes}"
    # Both limits did bind: some batches were cut by the record count, others by bytes.
    assert any(n >= 0.8 * max_records for n, _ in sizes), sizes
    assert any(b >= 0.5 * max_bytes and n < 0.5 * max_records for n, b in sizes), sizes
    assert [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]] == [n for n, _ in sizes if n]


def test_available_now_restart_reads_only_new_records(spark, kinesalite_server, stream_name, tmp_path):
    kinesis = streams.client(kinesalite_server)
    streams.create_stream(kinesis, stream_name, 2)
    checkpoint = str(tmp_path / "cp")
    first = [(f"first-{i}", f"k{i % 11}") for i in range(400)]
    streams.put_records(kinesis, stream_name, first)

    def run():
        df = _reader(spark, kinesalite_server, stream_name, initialPosition="trim_horizon", maxRecordsPerTrigger=150)
        batches, _ = _run_available_now(df, checkpoint)
        return sorted((r.data, r.partitionKey) for _, rows in batches for r in rows)

    assert run() == sorted(first)
    second = [(f"second-{i}", f"k{i % 11}") for i in range(300)]
    streams.put_records(kinesis, stream_name, second)
    assert run() == sorted(second)

    # Nothing new: the third run reads nothing and plans no batch.
    planned = spark_log.offset_batches(checkpoint)
    assert run() == []
    assert spark_log.offset_batches(checkpoint) == planned


# ---------------------------------------------------------------------------------------------
# Secrets
# ---------------------------------------------------------------------------------------------

@contextlib.contextmanager
def _driver_log(spark, path):
    """Copies the driver's log into ``path`` while the block runs: root at INFO, the connector's own code at
    DEBUG. The AWS SDK shaded inside the connector (``io.sparkkinesis.shaded``) stays at INFO: at DEBUG its
    SigV4 signer logs each canonical request, session token header included (reported separately)."""
    jvm = spark.sparkContext._jvm
    log4j = jvm.org.apache.logging.log4j
    level = log4j.Level
    ctx = log4j.LogManager.getContext(False)
    config = ctx.getConfiguration()
    layout = log4j.core.layout.PatternLayout.newBuilder().withPattern("%d %p %c: %m%n%throwable").build()
    name = f"secrets-test-{uuid.uuid4().hex[:8]}"
    appender = (log4j.core.appender.FileAppender.newBuilder().withFileName(path).setName(name)
                .setLayout(layout).setConfiguration(config).build())
    appender.start()
    config.addAppender(appender)
    config.getRootLogger().addAppender(appender, level.ALL, None)
    ctx.updateLoggers()
    spark.sparkContext.setLogLevel("INFO")
    log4j.core.config.Configurator.setLevel("io.sparkkinesis", level.DEBUG)
    log4j.core.config.Configurator.setLevel("io.sparkkinesis.shaded", level.INFO)
    try:
        yield
    finally:
        log4j.core.config.Configurator.setLevel("io.sparkkinesis.shaded", level.WARN)
        log4j.core.config.Configurator.setLevel("io.sparkkinesis", level.WARN)
        spark.sparkContext.setLogLevel("WARN")
        config.getRootLogger().removeAppender(name)
        ctx.updateLoggers()
        appender.stop()


def _printed(action) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        action()
    return out.getvalue()


def test_secrets_stay_out_of_plans_progress_errors_and_logs(spark, kinesalite_server, stream_name, tmp_path):
    token = uuid.uuid4().hex.upper()
    secrets = {
        "awsAccessKeyId": f"AKIAKEYID{token[:11]}",
        "awsSecretKey": f"SeCrEt/{token}+KeY",
        "awsSessionToken": f"SeSsIoNtOkEn{token[::-1]}",
    }
    kinesis = streams.client(kinesalite_server)
    streams.create_stream(kinesis, stream_name, 2)
    streams.put_records(kinesis, stream_name, [(f"s-{i}", f"k{i}") for i in range(50)])

    def options(stream):
        opts = _options(kinesalite_server, stream, initialPosition="trim_horizon")
        opts.update(secrets)  # kinesalite accepts any keys
        return opts

    log_file = str(tmp_path / "driver.log")
    seen = {}  # where -> text that must not hold a secret
    with _driver_log(spark, log_file):
        # A working query: plans, progress.
        df = spark.readStream.format("kinesis").options(**options(stream_name)).load()
        seen["df.explain(extended=True)"] = _printed(lambda: df.explain(extended=True))
        seen["df.explain(mode='formatted')"] = _printed(lambda: df.explain(mode="formatted"))
        query = (df.writeStream.format("memory").queryName(f"secrets_{token[:8].lower()}")
                 .option("checkpointLocation", str(tmp_path / "cp")).trigger(availableNow=True).start())
        try:
            assert query.awaitTermination(QUERY_END_S), "AvailableNow query did not finish"
            assert query.exception() is None, query.exception()
            seen["query.explain(extended=True)"] = _printed(lambda: query.explain(extended=True))
            seen["str(lastProgress)"] = str(query.lastProgress) + query.lastProgress.prettyJson
            seen["recentProgress"] = "\n".join(str(p) + p.json for p in query.recentProgress)
            seen["status"] = str(query.status)
        finally:
            query.stop()
        assert spark.table(query.name).count() == 50, "the query with these keys did read the stream"

        # A failing read: the stream does not exist (load() checks it, so the error comes at the call).
        missing = f"{stream_name}-missing"
        with pytest.raises(Exception) as failure:
            spark.readStream.format("kinesis").options(**options(missing)).load()
        seen["load() error"] = str(failure.value)
        assert missing in seen["load() error"], seen["load() error"][:2000]

        # A failing query: its stream is deleted after load(), so the query fails as it runs, and logs it.
        streams.create_stream(kinesis, missing, 1)
        df_missing = spark.readStream.format("kinesis").options(**options(missing)).load()
        streams.delete_stream(kinesis, missing)
        failing = (df_missing.writeStream.format("noop").option("checkpointLocation", str(tmp_path / "cp-missing"))
                   .trigger(availableNow=True).start())
        try:
            with pytest.raises(Exception) as failure:
                failing.awaitTermination(QUERY_END_S)
            jexc = failing._jsq.exception().get()
            seen["failed query exception"] = (
                str(failure.value) + str(failing.exception())
                + spark.sparkContext._jvm.org.apache.commons.lang3.exception.ExceptionUtils.getStackTrace(jexc))
        finally:
            failing.stop()
        assert missing in seen["failed query exception"], seen["failed query exception"][:2000]

        # An option error that involves the secret options (a secret key without its key id).
        half = {k: v for k, v in options(stream_name).items() if k != "awsAccessKeyId"}
        with pytest.raises(Exception) as option_error:
            bad = (spark.readStream.format("kinesis").options(**half).load().writeStream.format("noop")
                   .option("checkpointLocation", str(tmp_path / "cp-bad")).trigger(availableNow=True).start())
            try:
                bad.awaitTermination(QUERY_END_S)
            finally:
                bad.stop()
        seen["option error"] = str(option_error.value)
        assert "awsAccessKeyId" in seen["option error"], seen["option error"]

    for folder in ("cp", "cp-missing", "cp-bad"):
        for root, _, files in os.walk(tmp_path / folder):
            for f in files:
                with open(os.path.join(root, f), "rb") as fh:
                    seen[f"checkpoint file {os.path.join(root, f)}"] = fh.read().decode("utf-8", "replace")

    with open(log_file, encoding="utf-8", errors="replace") as f:
        seen["driver log"] = f.read()
    # The log did capture the queries (so a leak would have been seen).
    assert "MicroBatchExecution" in seen["driver log"] or "StreamExecution" in seen["driver log"], \
        seen["driver log"][:2000]
    assert missing in seen["driver log"]

    leaks = [(where, option) for where, text in seen.items() for option, value in secrets.items()
             if value in text]
    assert not leaks, f"secret values found in: {leaks}"
    assert "StaticKeys(<redacted>)" not in seen["str(lastProgress)"]  # no connection object in progress at all


# ---------------------------------------------------------------------------------------------
# Metrics that leave the process (issue 40, item 3)
# ---------------------------------------------------------------------------------------------

def _prometheus_gauges(text: str, query: str, stream: str) -> Dict[str, float]:
    """The connector's gauges of one query and stream in a PrometheusServlet page, by metric name: Spark writes each
    as ``metrics_<app>_driver_kinesis_<query>_source_<stream>_<metric>_Value{type="gauges"} <value>``, every
    character but letters and digits replaced by ``_``."""
    infix = re.sub("[^a-zA-Z0-9]", "_", f"kinesis.{query}.source.{stream}.")
    gauges = {}
    for line in text.splitlines():
        found = re.match(r"metrics_\w+?_driver_" + re.escape(infix) + r'(\w+)_Value\{type="gauges"\} (\S+)$', line)
        if found:
            gauges[found.group(1)] = float(found.group(2))
    return gauges


def test_prometheus_scrape_and_cloudwatch_backlog_of_a_running_query(kinesis_mock_server, stream_name, tmp_path,
                                                                     drivers):
    """Done when (issue 40): a Prometheus scrape of a running query shows its lag, and CloudWatch (moto) shows a
    growing backlog while a writer outpaces the query (maxRecordsPerTrigger holds it back); once the query stops,
    its gauges are gone from Spark's metrics system. One driver, one query, publishing every 2 s (an internal
    setting; users get once a minute)."""
    import boto3

    kinesis = streams.client(kinesis_mock_server)
    streams.create_stream(kinesis, stream_name, 2)
    query_name = f"metrics-{uuid.uuid4().hex[:8]}"
    run_tag = uuid.uuid4().hex[:8]
    # The connector speaks CloudWatch's CBOR protocol (the AWS SDK's), moto only its Query and JSON ones: the connector
    # publishes through tests/harness/cloudwatch_cbor.py, boto3 reads moto directly.
    with moto.running(tmp_path) as moto_endpoint, cloudwatch_cbor.running(moto_endpoint) as cloudwatch_endpoint:
        source = dict(connector_options(kinesis_mock_server), streamName=stream_name, initialPosition="trim_horizon",
                      maxRecordsPerTrigger="20", cloudWatchMetrics="true", cloudWatchEndpointUrl=cloudwatch_endpoint,
                      cloudWatchNamespace="SparkKinesisTests", cloudWatchDimensions=f"Run={run_tag}")
        config = {
            "master": "local[2]", "source": source, "checkpoint": str(tmp_path / "checkpoint"),
            "output": str(tmp_path / "output"), "sink": "parquet", "trigger": {"processingTime": "1 second"},
            "max_seconds": 240, "query_name": query_name, "ui_after_stop": "/metrics/prometheus",
            "conf": {
                "spark.ui.enabled": "true", "spark.ui.port": "0",
                "spark.metrics.conf.*.sink.prometheusServlet.class": "org.apache.spark.metrics.sink.PrometheusServlet",
                "spark.metrics.conf.*.sink.prometheusServlet.path": "/metrics/prometheus",
                "spark.sparkkinesis.internal.cloudWatchIntervalMillis": "2000",
            },
        }
        d = drivers("metrics", STREAMING_DRIVER, config)
        d.await_started(120)
        ui = json.loads((d.status / "started.json").read_text())["ui"]
        writer = Writer(streams.client(kinesis_mock_server), stream_name)
        writer.start(2400, chunk=100, seconds=12.0)  # 200 a second; the query reads at most 20 a second

        def scrape() -> Dict[str, float]:
            with urllib.request.urlopen(ui + "/metrics/prometheus", timeout=10) as answer:
                return _prometheus_gauges(answer.read().decode("utf-8"), query_name, stream_name)

        try:
            # Its lag: the local servers answer MillisBehindLatest 0 on an open shard, so the lag the scrape shows is
            # the backlog estimate, which a writer ten times faster than the query makes grow.
            gauges = d.wait_until(
                lambda: (lambda g: g if g.get("recordsRead", 0) > 0 and g.get("pendingRecords", 0) > 0 else None)(
                    scrape()), 120, "the query's gauges, with a backlog, in the Prometheus scrape", interval=0.5)
            assert {"maxMsBehindLatest", "avgMsBehindLatest", "pendingRecords", "pendingBytes", "throttledCalls",
                    "recordsRead", "bytesRead"} <= set(gauges), gauges
            assert gauges["maxMsBehindLatest"] >= gauges["avgMsBehindLatest"] >= 0, gauges
            assert gauges["pendingBytes"] > 0, gauges

            cloudwatch = boto3.client("cloudwatch", endpoint_url=moto_endpoint, region_name="us-east-1",
                                      aws_access_key_id="local-test-key", aws_secret_access_key="local-test-secret")
            dimensions = [{"Name": "QueryName", "Value": query_name}, {"Name": "StreamName", "Value": stream_name},
                          {"Name": "Run", "Value": run_tag}]

            def backlog() -> List[float]:
                now = datetime.datetime.now(datetime.timezone.utc)
                answer = cloudwatch.get_metric_data(
                    MetricDataQueries=[{"Id": "pending", "MetricStat": {"Metric": {
                        "Namespace": "SparkKinesisTests", "MetricName": "pendingRecords", "Dimensions": dimensions},
                        "Period": 1, "Stat": "Maximum"}}],
                    StartTime=now - datetime.timedelta(minutes=10), EndTime=now + datetime.timedelta(minutes=1),
                    ScanBy="TimestampAscending")
                return list(answer["MetricDataResults"][0]["Values"])

            values = d.wait_until(lambda: (lambda v: v if len(v) >= 5 and v[-1] > v[0] + 500 else None)(backlog()),
                                  90, "a growing pendingRecords in CloudWatch", interval=1.0,
                                  context=lambda: f"pendingRecords so far: {backlog()}")
            assert max(values) > 500, values
            writer.join(timeout=60)
        finally:
            writer.stop()
        assert d.stop(timeout=120) == 0, d.report()

        listed = cloudwatch.list_metrics(Namespace="SparkKinesisTests",
                                         Dimensions=[{"Name": "Run", "Value": run_tag}])["Metrics"]
        names = {m["MetricName"] for m in listed}
        assert names >= {"maxMsBehindLatest", "avgMsBehindLatest", "pendingRecords", "pendingBytes", "throttledCalls",
                         "recordsRead", "bytesRead"}, names
        read = cloudwatch.get_metric_statistics(Namespace="SparkKinesisTests", MetricName="recordsRead",
                                                Dimensions=dimensions, Statistics=["Sum"], Period=3600,
                                                StartTime=datetime.datetime.now() - datetime.timedelta(hours=1),
                                                EndTime=datetime.datetime.now() + datetime.timedelta(minutes=5))
        assert sum(p["Sum"] for p in read["Datapoints"]) > 0, read

    after = (d.status / "ui_after_stop.txt").read_text()
    assert "_driver_" in after, after[:2000]  # the page was scraped: Spark's own driver metrics are there
    assert re.sub("[^a-zA-Z0-9]", "_", f"kinesis.{query_name}.") not in after, "the stopped query's gauges remain"
