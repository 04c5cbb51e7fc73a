"""Draws the scale benchmark's results (io.sparkkinesis.bench.ScaleBench, `make bench-scale`): the driver's time per
step, the prefetch round's tasks' time and the heap against the shard count, on log-log axes with a line of slope 1
(linear growth) for comparison. Not a test: nothing here asserts.

    .venv/bin/python bench/scale/plot.py [build/bench/scale] [--out docs/img/scale.png]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SERIES = [
    ("latest_offset_ms", "latestOffset (driver, includes the prefetch round)"),
    ("prefetch_job_ms", "prefetch round (Spark job)"),
    ("prefetch_task_deserialize_ms", "prefetch tasks: deserializing (sum)"),
    ("add_batch_ms", "addBatch (the batch's tasks)"),
    ("query_planning_ms", "queryPlanning (planInputPartitions)"),
    ("wal_commit_ms", "walCommit (offset log)"),
]


def load(folder: Path) -> list[dict]:
    results = []
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text())
        for run in data["runs"]:
            if not run.get("error"):
                results.append(dict(run, commit=data["commit"]))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", default=str(ROOT / "build" / "bench" / "scale"))
    parser.add_argument("--out", default=None, help="the PNG to write (default: <folder>/scale.png)")
    args = parser.parse_args()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = load(Path(args.folder))
    if not runs:
        raise SystemExit(f"no results in {args.folder}")
    servers = sorted({r["server"] for r in runs})
    fig, axes = plt.subplots(1, 2, figsize=(13, 5))
    time_ax, heap_ax = axes
    for server in servers:
        rows = sorted((r for r in runs if r["server"] == server), key=lambda r: r["shards"])
        shards = [r["shards"] for r in rows]
        style = "-" if server == "fake" else "--"
        for i, (key, label) in enumerate(SERIES):
            values = [max(r.get(key, 0), 1) for r in rows]
            time_ax.plot(shards, values, style, marker="o", color=f"C{i}",
                         label=label if server == servers[0] else None)
        heap_ax.plot(shards, [r["heap_run_max_mb"] - r["heap_before_mb"] for r in rows], style, marker="o",
                     color="C0", label=f"heap after GC, most during the run, minus before [{server}]")
        heap_ax.plot(shards, [r["offset_log_bytes"] / 2**20 for r in rows], style, marker="s", color="C1",
                     label=f"offset log, all files [{server}]")
    for server in servers:
        time_ax.plot([], [], "-" if server == "fake" else "--", color="black", label=f"{server}")
    low, high = min(r["shards"] for r in runs), max(r["shards"] for r in runs)
    base = min(max(r["latest_offset_ms"], 1) for r in runs if r["shards"] == low)
    time_ax.plot([low, high], [base, base * high / low], ":", color="grey", label="linear (slope 1)")
    time_ax.plot([low, high], [base, base * (high / low) ** 2], "-.", color="grey", label="quadratic (slope 2)")
    time_ax.set_xscale("log")
    time_ax.set_yscale("log")
    time_ax.set_xlabel("shards")
    time_ax.set_ylabel("ms, summed over the query's batches")
    time_ax.set_title("Time per step, one AvailableNow query, local[2] (solid: fake, dashed: kinesalite)")
    time_ax.legend(fontsize=7)
    heap_ax.set_xscale("log")
    heap_ax.set_yscale("log")
    heap_ax.set_xlabel("shards")
    heap_ax.set_ylabel("MiB")
    heap_ax.set_title("JVM heap (driver and local executors) and offset log")
    heap_ax.legend(fontsize=7)
    commits = ", ".join(sorted({r["commit"] for r in runs}))
    fig.suptitle(f"spark-kinesis at scale (commit {commits})", fontsize=10)
    fig.tight_layout()
    out = Path(args.out) if args.out else Path(args.folder) / "scale.png"
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
