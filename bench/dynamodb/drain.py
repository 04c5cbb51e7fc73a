#!/usr/bin/env python3
"""Draining a DynamoDB stream, beside a one-thread boto3 loop (issue 53; not part of CI). Results and commands:
docs/performance.md, "DynamoDB Streams".

A table with a NEW_AND_OLD_IMAGES stream on moto's server (on loopback, stopped by its PID) gets ``--changes``
changes (puts of ``--keys`` items, each put again and again, so the stream holds inserts and modifies with both
images), written by BatchWriteItem. Then, in alternating rounds, each contender in a fresh process:

* ``loop``: one boto3 thread: DescribeStream, then per shard GetShardIterator at the trim horizon and GetRecords of
  up to 1,000 (DynamoDB Streams' page) until a page comes back empty (moto's shard never ends), counting the
  changes: the client loop a user would write instead of a query;
* ``connector``: ``format("dynamodb-streams")`` by table name, Trigger.AvailableNow into the ``noop`` sink,
  local[2], timed from ``start()`` to the query's end (the query start included), with Spark's progress phases.

Each run must see every change (the row count is checked); the medians and the ratio go to
``build/bench-<name>.json`` and, with ``--plot``, ``docs/img/<name>.png``.

    make bench-dynamodb                       # = bench/dynamodb/drain.py --changes 100000 --repeat 3 --plot
    .venv/bin/python bench/dynamodb/drain.py --changes 20000 --repeat 1
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "source"))

from common import available_now, in_fresh_process, new_figure, save_figure, spark_session, write_results  # noqa: E402
from harness import moto  # noqa: E402

CREDENTIALS = {"region_name": "us-east-1", "aws_access_key_id": "bench", "aws_secret_access_key": "bench"}
PHASES = ["latestOffset", "queryPlanning", "addBatch", "walCommit", "commitOffsets"]


def client(service: str, endpoint: str):
    import boto3
    from botocore.config import Config

    return boto3.client(service, endpoint_url=endpoint, config=Config(retries={"max_attempts": 10}), **CREDENTIALS)


def fill(endpoint: str, table: str, changes: int, keys: int) -> None:
    """Creates ``table`` with a stream and makes ``changes`` changes to it, 25 puts a request."""
    dynamodb = client("dynamodb", endpoint)
    dynamodb.create_table(TableName=table, KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                          AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                          BillingMode="PAY_PER_REQUEST",
                          StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"})
    payload = "x" * 60
    for start in range(0, changes, 25):
        items = [{"PutRequest": {"Item": {"pk": {"S": f"k{i % keys}"}, "n": {"N": str(i)}, "body": {"S": payload}}}}
                 for i in range(start, min(start + 25, changes))]
        pending = {table: items}
        for _ in range(20):  # bounded: moto answers every item, but a real service may leave some unprocessed
            pending = dynamodb.batch_write_item(RequestItems=pending).get("UnprocessedItems") or {}
            if not pending:
                break
        else:
            raise SystemExit(f"BatchWriteItem left items unprocessed 20 times from change {start}")


def loop(spec: dict) -> dict:
    """One boto3 thread reading every shard of the table's stream in turn, in this (fresh) process."""
    began = time.monotonic()
    streams = client("dynamodbstreams", spec["endpoint"])
    arn = client("dynamodb", spec["endpoint"]).describe_table(TableName=spec["table"])["Table"]["LatestStreamArn"]
    shards = []
    described = streams.describe_stream(StreamArn=arn)["StreamDescription"]
    shards += [s["ShardId"] for s in described["Shards"]]
    while described.get("LastEvaluatedShardId"):
        described = streams.describe_stream(StreamArn=arn, ExclusiveStartShardId=described["LastEvaluatedShardId"])[
            "StreamDescription"]
        shards += [s["ShardId"] for s in described["Shards"]]
    read = 0
    for shard in shards:
        iterator = streams.get_shard_iterator(StreamArn=arn, ShardId=shard,
                                              ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        while iterator:
            page = streams.get_records(ShardIterator=iterator, Limit=1000)
            read += len(page["Records"])
            iterator = page.get("NextShardIterator")
            if not page["Records"]:
                break
    return {"seconds": time.monotonic() - began, "rows": read}


def query(spec: dict) -> dict:
    """One AvailableNow query of the table's stream through the connector, in this (fresh) process."""
    began = time.monotonic()
    spark = spark_session("dynamodb-drain", {"spark.ui.showConsoleProgress": "false"})
    session = time.monotonic() - began
    df = (spark.readStream.format("dynamodb-streams")
          .options(tableName=spec["table"], endpointUrl=spec["endpoint"], region="us-east-1",
                   awsAccessKeyId="bench", awsSecretKey="bench", initialPosition="trim_horizon").load())
    _, seconds, progress = available_now(df, spec["timeout"], "the connector")
    spark.stop()
    return {"seconds": seconds, "session": session, "rows": sum(p["numInputRows"] for p in progress),
            "batches": len([p for p in progress if p["numInputRows"]]),
            "phases": [{k: p["durationMs"].get(k, 0) for k in PHASES} for p in progress]}


def run(spec: dict) -> dict:
    """``spec`` in a fresh Python process; its result, checked for the change count."""
    result = in_fresh_process(__file__, spec, spec["timeout"] + 180)
    if result["rows"] != spec["changes"]:
        raise SystemExit(f"{spec['kind']} read {result['rows']} changes of {spec['changes']}")
    return result


def summary(runs: list[dict]) -> dict:
    out = {"median": round(statistics.median(r["seconds"] for r in runs), 2),
           "runs": [round(r["seconds"], 2) for r in runs]}
    if runs and "phases" in runs[0]:
        out["session"] = round(statistics.median(r["session"] for r in runs), 2)
        out["batches"] = runs[0]["batches"]
        for k in PHASES:
            out[k] = round(statistics.median(sum(p[k] for p in r["phases"]) for r in runs) / 1000, 2)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--changes", type=int, default=100_000, help="changes written to the table")
    parser.add_argument("--keys", type=int, default=5_000, help="items the changes are spread over")
    parser.add_argument("--repeat", type=int, default=3, help="rounds; each runs every contender once, in turn")
    parser.add_argument("--timeout", type=int, default=900, help="seconds a run may take")
    parser.add_argument("--plot", action="store_true", help="write docs/img/<--name>.png")
    parser.add_argument("--name", default="dynamodb-drain", help="the results' name (build/, docs/img/)")
    args = parser.parse_args()
    if args.child:
        spec = json.loads(args.child)
        print(json.dumps(loop(spec) if spec["kind"] == "loop" else query(spec)), flush=True)
        return
    contenders = ["loop", "connector"]
    with tempfile.TemporaryDirectory() as logs, moto.running(Path(logs)) as endpoint:
        table = f"bench-changes-{args.changes}"
        began = time.monotonic()
        fill(endpoint, table, args.changes, args.keys)
        print(json.dumps({"written": args.changes, "seconds": round(time.monotonic() - began, 1)}), flush=True)
        runs: dict[str, list] = {c: [] for c in contenders}
        for n in range(args.repeat):
            # In turn, the order rotating, so that a slower spell of the machine or server touches each alike.
            for kind in contenders[n % 2:] + contenders[:n % 2]:
                spec = {"kind": kind, "endpoint": endpoint, "table": table, "changes": args.changes,
                        "timeout": args.timeout}
                runs[kind].append(run(spec))
                print(json.dumps({"kind": kind, "seconds": round(runs[kind][-1]["seconds"], 2)}), flush=True)
    row = {"changes": args.changes, "keys": args.keys, **{k: summary(v) for k, v in runs.items()}}
    row["connectorOverLoop"] = round(row["loop"]["median"] / row["connector"]["median"], 2)
    print(json.dumps(row), flush=True)
    write_results(f"bench-{args.name}", {"runs": [row]})
    if args.plot:
        plot(row, args.name)


def plot(row: dict, name: str) -> None:
    """Seconds per contender; the connector's bar beside its Spark phases."""
    fig, ax = new_figure()
    labels = ["loop", "connector"] + [f"  {k}" for k in PHASES]
    values = [row["loop"]["median"], row["connector"]["median"]] + [row["connector"].get(k, 0) for k in PHASES]
    ax.barh(range(len(labels)), values, color=["tab:blue", "tab:orange"] + ["tab:gray"] * len(PHASES))
    ax.set_yticks(range(len(labels)), labels)
    ax.invert_yaxis()
    ax.set_xlabel("seconds, median (fresh process)")
    ax.set_title(f"Draining {row['changes']:,} DynamoDB changes (moto, local[2])")
    save_figure(fig, name)


if __name__ == "__main__":
    main()
