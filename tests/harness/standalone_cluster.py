#!/usr/bin/env python3
"""A Spark standalone cluster on loopback, started from the pip-installed PySpark, for tests that need executors
in separate JVMs (local mode runs every task in the driver's JVM and never speculates).

One master and N workers, each a ``spark-class`` JVM started directly as a subprocess in its own session, so the
harness holds their PIDs: stopping sends SIGTERM to each (a worker then kills its executors), waits, and sends
SIGKILL to whatever is left in the process groups it started. Workers take turns on the hosts given, by default
127.0.0.1 and 127.0.0.2 (both loopback on Linux): Spark never launches a speculative copy of a task on a host
that already runs an attempt of it, so a speculation test needs two host names. Every process binds its host
only (``SPARK_LOCAL_IP``), on ports picked at start; logs, work and scratch folders are under ``workdir``.

Python::

    from harness import standalone_cluster
    with standalone_cluster.start(workdir) as cluster:
        print(cluster.master_url)          # spark://127.0.0.1:PORT, for --master
        print(cluster.worker_hosts())      # ['127.0.0.1', '127.0.0.2']
        print(cluster.executors())         # the executor JVMs the workers run now, with their PIDs

Command line (starts a cluster, prints one JSON line, and runs until interrupted)::

    python tests/harness/standalone_cluster.py [--workers N] [--workdir DIR] [--seconds S]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Dict, List, NamedTuple, Optional, Sequence

try:
    from .waiting import WaitFailed, wait_for
except ImportError:  # run as a script: python tests/harness/standalone_cluster.py
    from waiting import WaitFailed, wait_for

__all__ = ["ClusterError", "Executor", "StandaloneCluster", "host_usable", "spark_home", "start"]

MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
EXECUTOR_CLASS = "org.apache.spark.executor.CoarseGrainedExecutorBackend"
MASTER_HOST = "127.0.0.1"
WORKER_HOSTS = ("127.0.0.1", "127.0.0.2")

START_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 15.0
START_ATTEMPTS = 3
DAEMON_MEMORY = "256m"  # heap of the master and worker JVMs (executors get their own, from the application)
# No port retries: a port taken between picking and binding fails the start (which then picks again) instead of
# moving the web UI to a port the harness does not know. The REST submission server would take the fixed port 6066.
MASTER_PROPERTIES = {"spark.port.maxRetries": "0", "spark.master.rest.enabled": "false"}
WORKER_PROPERTIES = {"spark.port.maxRetries": "0"}


# Loopback is never reached through an HTTP proxy from the environment.
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class ClusterError(RuntimeError):
    """The cluster could not be started or stopped."""


def _log(message: str) -> None:
    print(f"[standalone_cluster] {message}", file=sys.stderr, flush=True)


def spark_home() -> Path:
    """The Spark distribution inside the installed PySpark (holds bin/spark-class, bin/spark-submit and jars/)."""
    import pyspark

    home = Path(pyspark.__file__).resolve().parent
    if not (home / "bin" / "spark-class").exists():
        raise ClusterError(f"{home} has no bin/spark-class: is PySpark installed from its full distribution?")
    return home


def host_usable(host: str) -> bool:
    """Whether a TCP socket can listen on ``host`` here (127.0.0.2 is loopback on Linux, not on macOS)."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind((host, 0))
            s.listen(1)
        return True
    except OSError:
        return False


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def _tail(path: Path, lines: int = 40) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 64 * 1024))
            text = f.read().decode("utf-8", "replace")
    except OSError as e:
        return f"(could not read {path}: {e})"
    return "\n".join(text.splitlines()[-lines:])


class Executor(NamedTuple):
    """An executor JVM that a worker launched for an application."""

    worker: str  # the worker's name: worker-0, worker-1, ...
    pid: int
    app_id: str  # app-YYYYMMDDHHMMSS-NNNN: ids of later applications sort after earlier ones
    executor_id: str


def _group_of(pid: int) -> Optional[int]:
    """The process group of ``pid`` from /proc/PID/stat, None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read().decode("ascii", "replace")
        return int(stat[stat.rindex(")") + 2:].split(" ")[2])  # after the name: state, ppid, pgrp
    except (OSError, ValueError, IndexError):
        return None


def _arguments(pid: int) -> List[str]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return [a.decode("utf-8", "replace") for a in f.read().split(b"\0") if a]
    except OSError:
        return []


def _option(args: List[str], name: str) -> str:
    return args[args.index(name) + 1] if name in args[:-1] else ""


class _Daemon:
    """One master or worker JVM, leader of its own process group (its executors and their Python workers join it)."""

    def __init__(self, name: str, host: str, args: Sequence[str], workdir: Path, env: Dict[str, str],
                 properties: Dict[str, str]):
        self.name = name
        self.host = host
        self.log_path = workdir / f"{name}.log"
        props = workdir / f"{name}.properties"
        props.write_text("".join(f"{k}={v}\n" for k, v in properties.items()))
        command = [str(spark_home() / "bin" / "spark-class"), *args, "--properties-file", str(props)]
        self._log_file = open(self.log_path, "wb")
        try:
            self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=self._log_file,
                                            stderr=subprocess.STDOUT, env=env, cwd=str(workdir),
                                            start_new_session=True)
        finally:
            self._log_file.close()  # the child holds its own descriptor
        self.pid = self.process.pid  # spark-class execs the JVM, so this is the JVM's PID

    def poll(self) -> Optional[int]:
        """None while the JVM runs, else its exit code."""
        return self.process.poll()

    def running(self) -> bool:
        return self.process.poll() is None

    def log_tail(self, lines: int = 40) -> str:
        return _tail(self.log_path, lines)

    def _group_alive(self) -> bool:
        try:
            os.killpg(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True

    def terminate(self) -> None:
        if self.running():
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(signal.SIGTERM)

    def finish(self, timeout: float) -> None:
        """Waits for the JVM to exit after terminate(); then SIGKILLs the JVM and what is left of its group."""
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _log(f"{self.name} (PID {self.pid}) did not stop within {timeout:.0f} s of SIGTERM: SIGKILL")
        deadline = time.monotonic() + 10.0
        while self.process.poll() is None or self._group_alive():  # poll() reaps the JVM, a zombie in the group
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.pid, signal.SIGKILL)
            if time.monotonic() > deadline:
                raise ClusterError(f"process group {self.pid} of {self.name} survives SIGKILL")
            time.sleep(0.05)
        self.process.wait(timeout=10)


class StandaloneCluster:
    """A running cluster; ``stop()`` it, or use it as a context manager."""

    def __init__(self, workdir: Path, master: _Daemon, webui_port: int, env: Dict[str, str]):
        self.workdir = workdir
        self.master = master
        self.webui_port = webui_port
        self.workers: List[_Daemon] = []
        self.master_url = ""
        self._env = env
        self._stopped = False

    @property
    def webui_url(self) -> str:
        return f"http://{MASTER_HOST}:{self.webui_port}"

    def state(self, timeout: float = 5.0) -> dict:
        """The master's state as JSON (``url``, ``workers`` with ``host`` and ``state``, ``activeapps``, ...)."""
        with _DIRECT.open(f"{self.webui_url}/json/", timeout=timeout) as response:
            return json.loads(response.read().decode("utf-8"))

    def _try_state(self) -> Optional[dict]:
        try:
            return self.state()
        except (OSError, ValueError, urllib.error.URLError):
            return None

    def alive_workers(self) -> List[dict]:
        state = self._try_state() or {}
        return [w for w in state.get("workers", []) if w.get("state") == "ALIVE"]

    def worker_hosts(self) -> List[str]:
        return sorted(w["host"] for w in self.alive_workers())

    def daemons(self) -> List[_Daemon]:
        return [self.master, *self.workers]

    def executors(self) -> List[Executor]:
        """The executor JVMs running now, found in /proc: a worker launches them in its own process group (the
        harness started each worker as the leader of a new one). Empty where there is no /proc."""
        groups = {d.pid: d.name for d in self.workers if d.running()}
        found = []
        for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
            if not entry.isdigit() or _group_of(int(entry)) not in groups:
                continue
            args = _arguments(int(entry))
            if EXECUTOR_CLASS in args:
                found.append(Executor(groups[_group_of(int(entry))], int(entry), _option(args, "--app-id"),
                                      _option(args, "--executor-id")))
        return sorted(found, key=lambda e: (e.app_id, e.worker, e.pid))

    def kill_executor(self, executor: Executor) -> bool:
        """SIGKILL to one executor JVM, as a lost machine would end it; its worker reports the loss and the master
        asks a worker for a replacement. False when it was no longer running (its PID is checked first against
        the executors found now, so a reused PID is never signalled)."""
        if executor not in self.executors():
            return False
        try:
            os.kill(executor.pid, signal.SIGKILL)
        except ProcessLookupError:
            return False
        return True

    def lose_machine(self, executor: Executor) -> bool:
        """SIGKILL to the executor's worker and everything it launched, as a lost machine would end them: the master
        drops the worker at once (its connection closes), and as every other worker's core is taken no replacement
        executor comes. False when the executor was no longer running."""
        if executor not in self.executors():
            return False
        worker = next(d for d in self.workers if d.name == executor.worker)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(worker.pid, signal.SIGKILL)
        worker.process.wait(timeout=30)
        return True

    def logs(self, lines: int = 40) -> str:
        """The last lines of every daemon's log, for failure messages."""
        return "\n".join(f"--- {d.name} (PID {d.pid}, {'running' if d.running() else 'exited'}), "
                         f"{d.log_path}:\n{d.log_tail(lines)}" for d in self.daemons())

    def is_running(self) -> bool:
        return not self._stopped and all(d.running() for d in self.daemons())

    def app_env(self) -> Dict[str, str]:
        """Environment for a driver (spark-submit or a PySpark script) of this cluster, on 127.0.0.1."""
        return dict(self._env, SPARK_LOCAL_IP=MASTER_HOST)

    def stop(self) -> None:
        """SIGTERM to the workers (they stop their executors) and the master, then SIGKILL what is left."""
        if self._stopped:
            return
        self._stopped = True
        errors = []
        for group in (self.workers, [self.master]):
            for d in group:
                d.terminate()
            for d in group:
                try:
                    d.finish(STOP_TIMEOUT_S)
                except (ClusterError, subprocess.TimeoutExpired) as e:
                    errors.append(str(e))
        if errors:
            raise ClusterError("; ".join(errors))

    def to_dict(self) -> dict:
        return {"masterUrl": self.master_url, "webui": self.webui_url, "workdir": str(self.workdir),
                "pids": {d.name: d.pid for d in self.daemons()}, "workerHosts": [d.host for d in self.workers]}

    def __enter__(self) -> "StandaloneCluster":
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop()


def _await(condition, cluster: StandaloneCluster, deadline: float, what: str):
    """``wait_for`` the condition until ``deadline`` (monotonic), failing at once when a daemon exits; its value."""
    try:
        return wait_for(condition, deadline - time.monotonic(), what, process=cluster.daemons(), log=cluster.logs)
    except WaitFailed as e:
        raise ClusterError(str(e)) from None


def _base_env(workdir: Path) -> Dict[str, str]:
    env = dict(os.environ)
    for name in ("SPARK_MASTER_HOST", "SPARK_MASTER_PORT", "SPARK_WORKER_CORES", "SPARK_WORKER_MEMORY",
                 "SPARK_WORKER_INSTANCES", "SPARK_MASTER_OPTS", "SPARK_WORKER_OPTS", "SPARK_DAEMON_JAVA_OPTS"):
        env.pop(name, None)
    conf_dir = workdir / "conf"  # empty: no spark-env.sh or spark-defaults.conf from elsewhere
    conf_dir.mkdir(exist_ok=True)
    env.update({
        "SPARK_HOME": str(spark_home()),
        "SPARK_CONF_DIR": str(conf_dir),
        "SPARK_DAEMON_MEMORY": DAEMON_MEMORY,
        "SPARK_LOCAL_DIRS": str(workdir / "scratch"),
        "PYSPARK_PYTHON": env.get("PYSPARK_PYTHON") or sys.executable,
        "AWS_EC2_METADATA_DISABLED": "true",
    })
    return env


def _start_master(workdir: Path, env: Dict[str, str], deadline: float) -> StandaloneCluster:
    last_error: Optional[ClusterError] = None
    for attempt in range(1, START_ATTEMPTS + 1):
        webui_port = _free_port(MASTER_HOST)
        master = _Daemon(f"master-{attempt}" if attempt > 1 else "master", MASTER_HOST,
                         [MASTER_CLASS, "--host", MASTER_HOST, "--port", "0", "--webui-port", str(webui_port)],
                         workdir, dict(env, SPARK_LOCAL_IP=MASTER_HOST), MASTER_PROPERTIES)
        cluster = StandaloneCluster(workdir, master, webui_port, env)
        try:
            state = _await(cluster._try_state, cluster, deadline, "the master's web UI")
            cluster.master_url = state["url"]
            return cluster
        except ClusterError as e:
            last_error = e
            with contextlib.suppress(ClusterError):
                cluster.stop()
            if time.monotonic() > deadline:
                break
            _log(f"the master did not start (attempt {attempt} of {START_ATTEMPTS}); trying other ports")
    raise last_error or ClusterError("the master did not start")


def start(workdir: Optional[Path] = None, workers: int = 2, hosts: Sequence[str] = WORKER_HOSTS,
          worker_cores: int = 1, worker_memory: str = "1g",
          timeout: float = START_TIMEOUT_S) -> StandaloneCluster:
    """Starts a master on 127.0.0.1 and ``workers`` workers on ``hosts`` in turn; returns once all are ALIVE.

    Raises ClusterError with the daemons' log tails when something does not come up within ``timeout`` s
    (after stopping what it started).
    """
    if workdir is None:
        workdir = Path(tempfile.mkdtemp(prefix="spark-standalone-"))
    workdir = Path(workdir).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    unusable = [h for h in dict.fromkeys(hosts) if not host_usable(h)]
    if unusable:
        raise ClusterError(f"cannot listen on {', '.join(unusable)} here; worker hosts must be local addresses")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        raise ClusterError("no java on PATH and JAVA_HOME is not set")
    env = _base_env(workdir)
    (workdir / "scratch").mkdir(exist_ok=True)
    deadline = time.monotonic() + timeout
    cluster = _start_master(workdir, env, deadline)
    try:
        for i in range(workers):
            host = hosts[i % len(hosts)]
            work_dir = workdir / f"worker-{i}"
            work_dir.mkdir(exist_ok=True)
            cluster.workers.append(_Daemon(
                f"worker-{i}", host,
                [WORKER_CLASS, "--host", host, "--port", "0", "--webui-port", "0", "--cores", str(worker_cores),
                 "--memory", worker_memory, "--work-dir", str(work_dir), cluster.master_url],
                workdir, dict(env, SPARK_LOCAL_IP=host), WORKER_PROPERTIES))
        _await(lambda: len(cluster.alive_workers()) >= workers, cluster, deadline,
               f"{workers} ALIVE workers at {cluster.webui_url}/json/")
    except BaseException:
        with contextlib.suppress(ClusterError):
            cluster.stop()
        raise
    return cluster


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description="Run a Spark standalone cluster on loopback until interrupted.")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--seconds", type=float, default=3600.0, help="stop after this long (default 1 hour)")
    args = parser.parse_args(argv)
    cluster = start(args.workdir, workers=args.workers)
    try:
        print(json.dumps(cluster.to_dict()), flush=True)
        for signum in (signal.SIGINT, signal.SIGTERM):  # Ctrl-C or kill: stop the cluster on the way out
            signal.signal(signum, lambda *_: sys.exit(0))
        deadline = time.monotonic() + args.seconds
        while cluster.is_running():
            if time.monotonic() > deadline:
                return 0
            time.sleep(1.0)
        _log(f"a daemon exited:\n{cluster.logs()}")
        return 1
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):  # a second Ctrl-C must not cut the stop short
            signal.signal(signum, signal.SIG_IGN)
        cluster.stop()


if __name__ == "__main__":
    sys.exit(main())
