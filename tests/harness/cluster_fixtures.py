"""pytest fixture for a Spark standalone cluster (standalone_cluster.py), and a reader of Spark event logs.

``tests/conftest.py`` lists this module in ``pytest_plugins``, so every test module can ask for ``spark_cluster``
without importing it (a session fixture imported into two modules would be two fixtures, two clusters, to pytest).

The fixture is session-scoped: the cluster starts once, at the first test that asks for it, and is stopped at the
end of the session, whatever the tests did.

Which executor ran which task, and whether it was a speculative copy, is read from the application's event log
(``spark.eventLog.enabled``): it is Spark's own record, the same one the history server shows.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterator, List, Optional

import pytest

from . import standalone_cluster

WORKERS = 2


@pytest.fixture(scope="session")
def spark_cluster(tmp_path_factory) -> Iterator[standalone_cluster.StandaloneCluster]:
    """A master on 127.0.0.1 and two one-core, 1 GiB workers, on 127.0.0.1 and 127.0.0.2."""
    missing = [h for h in standalone_cluster.WORKER_HOSTS if not standalone_cluster.host_usable(h)]
    if missing:
        pytest.skip(f"cannot listen on {', '.join(missing)}: the cluster needs two loopback addresses")
    cluster = standalone_cluster.start(tmp_path_factory.mktemp("spark-cluster"), workers=WORKERS)
    try:
        yield cluster
    finally:
        cluster.stop()


def cluster_conf(cluster, event_log_dir: Path) -> Dict[str, str]:
    """Spark confs for an application on ``cluster``: small executors, one per worker, jobs start only once both
    executors are registered, and an event log in ``event_log_dir``."""
    event_log_dir.mkdir(parents=True, exist_ok=True)
    return {
        "spark.executor.memory": "512m",
        "spark.executor.cores": "1",
        "spark.cores.max": str(WORKERS),
        "spark.scheduler.minRegisteredResourcesRatio": "1.0",
        "spark.scheduler.maxRegisteredResourcesWaitingTime": "120s",
        "spark.eventLog.enabled": "true",
        "spark.eventLog.dir": event_log_dir.resolve().as_uri(),
        "spark.eventLog.rolling.enabled": "false",  # one plain JSON-lines file per application
        "spark.eventLog.compress": "false",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
    }


@dataclass
class TaskRun:
    """One task attempt, from its SparkListenerTaskStart event and, when there is one, its SparkListenerTaskEnd.

    An attempt still running when the application stopped (a killed original whose kill had not landed yet, say)
    has no end: ``finish`` is None and ``reason`` is None.
    """

    task_id: int
    stage: int
    partition: int
    attempt: int
    executor: str
    host: str
    speculative: bool
    launch: int  # ms since the epoch
    locality: str = ""  # PROCESS_LOCAL (on the executor it preferred), NODE_LOCAL, ANY, ...
    finish: Optional[int] = None
    reason: Optional[str] = None  # "Success", "TaskKilled", "ExceptionFailure", ...
    job_properties: Dict[str, str] = field(default_factory=dict, repr=False)


class EventLog:
    """The events of one application's event log (JSON lines), finished or still ``.inprogress``."""

    def __init__(self, path: Path):
        self.path = path
        self.events: List[dict] = []
        for line in path.read_text().splitlines():
            line = line.strip()
            if line.endswith("}"):  # a log cut by a kill may end in a partial line
                self.events.append(json.loads(line))

    @classmethod
    def single_in(cls, folder: Path) -> "EventLog":
        """The only application's log in ``folder``."""
        logs = [p for p in folder.iterdir() if p.is_file() and not p.name.startswith(".")]
        assert len(logs) == 1, f"expected one event log in {folder}, found {[p.name for p in logs]}"
        return cls(logs[0])

    def of_type(self, name: str) -> List[dict]:
        return [e for e in self.events if e.get("Event") == f"SparkListener{name}"]

    def executor_hosts(self) -> Dict[str, str]:
        """Executor id -> host, for every executor the application had."""
        return {e["Executor ID"]: e["Executor Info"]["Host"] for e in self.of_type("ExecutorAdded")}

    def stage_rdds(self) -> Dict[int, List[str]]:
        """Stage id -> the names of the RDDs it computes (a class name when the RDD has none: ``FetchRDD``, ...)."""
        return {e["Stage Info"]["Stage ID"]: [r.get("Name", "") for r in e["Stage Info"].get("RDD Info", [])]
                for e in self.of_type("StageSubmitted")}

    def tasks(self) -> List[TaskRun]:
        """Every task attempt the application launched, in launch order."""
        stage_properties: Dict[int, Dict[str, str]] = {}
        for job in self.of_type("JobStart"):
            for stage in job.get("Stage IDs", []):
                stage_properties[stage] = dict(job.get("Properties") or {})
        runs: Dict[int, TaskRun] = {}
        for start in self.of_type("TaskStart"):
            info = start["Task Info"]
            runs[info["Task ID"]] = TaskRun(
                task_id=info["Task ID"], stage=start["Stage ID"], partition=info.get("Partition ID", info["Index"]),
                attempt=info["Attempt"], executor=info["Executor ID"], host=info["Host"],
                speculative=bool(info.get("Speculative")), launch=info["Launch Time"],
                locality=info.get("Locality", ""),
                job_properties=stage_properties.get(start["Stage ID"], {}))
        for end in self.of_type("TaskEnd"):
            info = end["Task Info"]
            run = runs.get(info["Task ID"])
            if run is not None:
                run.finish = info["Finish Time"]
                run.reason = (end.get("Task End Reason") or {}).get("Reason", "?")
        return sorted(runs.values(), key=lambda r: (r.launch, r.task_id))

    def streaming_tasks(self, query_id: Optional[str] = None) -> List[TaskRun]:
        """Tasks of jobs run by streaming queries (all of them, or the one with ``query_id``)."""
        return [t for t in self.tasks() if "sql.streaming.queryId" in t.job_properties
                and query_id in (None, t.job_properties["sql.streaming.queryId"])]
