#!/usr/bin/env python3
"""Start and stop the local Kinesis servers that spark-kinesis tests and the demo run against.

This is the one harness for every caller: the pytest fixtures (``pytest_plugin.py``), the Scala test
fixtures (through the command line below) and ``make demo``. It uses only the Python standard library.

Two servers are supported (see docs and the reference notes for what each one can do):

* ``kinesis-mock``: the npm package ``kinesis-local`` (the engine inside LocalStack). Default backend.
* ``kinesalite``: a separate, faster implementation. Java clients must turn CBOR off against it.

Both are Node programs installed from ``package-lock.json`` in this folder into ``node_modules/``.
They listen on 127.0.0.1 only, on free ports picked at start.

Python::

    from harness import local_kinesis
    with local_kinesis.start("kinesis-mock") as server:
        print(server.endpoint)          # http://127.0.0.1:PORT

Command line (prints one JSON line on stdout and leaves the server running)::

    python tests/harness/local_kinesis.py install
    python tests/harness/local_kinesis.py start KIND [--workdir DIR] [--persist-dir DIR] [--port PORT]
    python tests/harness/local_kinesis.py stop PID
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import fcntl
import hashlib
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import List, Optional, Union

__all__ = [
    "KINDS",
    "KINESIS_MOCK",
    "KINESALITE",
    "LocalKinesis",
    "LocalKinesisError",
    "ensure_installed",
    "start",
    "stop_pid",
]

KINESIS_MOCK = "kinesis-mock"
KINESALITE = "kinesalite"
KINDS = (KINESIS_MOCK, KINESALITE)

HARNESS_DIR = Path(__file__).resolve().parent
NODE_MODULES = HARNESS_DIR / "node_modules"
PACKAGE_LOCK = HARNESS_DIR / "package-lock.json"
KINESIS_MOCK_MAIN = NODE_MODULES / "kinesis-local" / "main.js"
KINESIS_MOCK_CERT = NODE_MODULES / "kinesis-local" / "server.json"
KINESALITE_MAIN = HARNESS_DIR / "kinesalite.js"
LOOPBACK_PRELOAD = HARNESS_DIR / "loopback.js"
HOST = "127.0.0.1"

START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 10.0
NPM_TIMEOUT_S = 600.0
INSTALL_LOCK_TIMEOUT_S = 900.0
# How long stream state changes (CREATING, UPDATING, DELETING, ...) take on kinesis-mock.
KINESIS_MOCK_STATE_DURATION = "100ms"
SHARD_LIMIT = 2000

# Markers that identify a process this harness started (checked before signalling a bare PID).
_PROCESS_MARKERS = ("kinesis-local", "kinesalite.js")

_PROBE_HEADERS = {
    "X-Amz-Target": "Kinesis_20131202.ListStreams",
    "Content-Type": "application/x-amz-json-1.1",
    # A syntactically valid (unverified) SigV4 header: both servers answer a real 200 to it, and
    # kinesis-mock does not log a warning for a missing token.
    "Authorization": (
        "AWS4-HMAC-SHA256 Credential=harness/20000101/us-east-1/kinesis/aws4_request, "
        "SignedHeaders=host;x-amz-date, Signature=00"
    ),
    "X-Amz-Date": "20000101T000000Z",
}


class LocalKinesisError(RuntimeError):
    """A local Kinesis server could not be installed, started or stopped."""


def _log(message: str) -> None:
    print(f"[local_kinesis] {message}", file=sys.stderr, flush=True)


def _tool(env_name: str, default: str) -> str:
    """The executable for node or npm: $SPARK_KINESIS_NODE / $SPARK_KINESIS_NPM, else from PATH."""
    name = os.environ.get(env_name) or default
    found = shutil.which(name)
    if not found:
        raise LocalKinesisError(f"{name!r} was not found on PATH (set {env_name} to override): "
                                f"Node.js 18+ and npm are needed for the local Kinesis servers")
    return found


# ---------------------------------------------------------------------------------------------
# Installation
# ---------------------------------------------------------------------------------------------

def _install_marker() -> Path:
    # npm writes node_modules/.package-lock.json at the end of every install.
    return NODE_MODULES / ".package-lock.json"


def _needs_install() -> bool:
    required = (_install_marker(), KINESIS_MOCK_MAIN, KINESIS_MOCK_CERT,
                NODE_MODULES / "kinesalite" / "index.js")
    if not all(p.exists() for p in required):
        return True
    return _install_marker().stat().st_mtime < PACKAGE_LOCK.stat().st_mtime


@contextlib.contextmanager
def _install_lock():
    """Serialises installs between processes (pytest and sbt may start servers at the same time)."""
    digest = hashlib.sha256(str(HARNESS_DIR).encode()).hexdigest()[:16]
    lock_path = Path(tempfile.gettempdir()) / f"spark-kinesis-harness-{digest}.lock"
    with open(lock_path, "a+") as lock_file:
        deadline = time.monotonic() + INSTALL_LOCK_TIMEOUT_S
        while True:
            try:
                fcntl.flock(lock_file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise LocalKinesisError(f"timed out waiting for the install lock {lock_path}")
                time.sleep(0.5)
        try:
            yield
        finally:
            fcntl.flock(lock_file.fileno(), fcntl.LOCK_UN)


def ensure_installed() -> None:
    """Runs ``npm ci`` in the harness folder when node_modules is missing or older than the lock file.

    Idempotent and cheap when everything is in place. npm's output goes to stderr.
    """
    if not _needs_install():
        return
    if not PACKAGE_LOCK.exists():
        raise LocalKinesisError(f"{PACKAGE_LOCK} is missing")
    with _install_lock():
        if not _needs_install():  # another process installed while we waited
            return
        npm = _tool("SPARK_KINESIS_NPM", "npm")
        command = [npm, "ci", "--no-audit", "--no-fund"]
        _log(f"installing the local Kinesis servers: {' '.join(command[1:])} (in {HARNESS_DIR})")
        started = time.monotonic()
        try:
            result = subprocess.run(command, cwd=HARNESS_DIR, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    timeout=NPM_TIMEOUT_S, check=False)
        except subprocess.TimeoutExpired as e:
            raise LocalKinesisError(f"npm ci did not finish within {NPM_TIMEOUT_S:.0f} s") from e
        output = result.stdout.decode("utf-8", "replace")
        if output.strip():
            sys.stderr.write(output if output.endswith("\n") else output + "\n")
            sys.stderr.flush()
        if result.returncode != 0:
            raise LocalKinesisError(f"npm ci failed with exit code {result.returncode}")
        if _needs_install():
            raise LocalKinesisError("npm ci succeeded but the servers are still missing from node_modules")
        _log(f"installed in {time.monotonic() - started:.1f} s")


# ---------------------------------------------------------------------------------------------
# Processes
# ---------------------------------------------------------------------------------------------

def _free_ports(count: int) -> List[int]:
    """Distinct ports that are free on 127.0.0.1 right now (all held open until all are chosen)."""
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind((HOST, 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _proc_state(pid: int) -> Optional[str]:
    """The state letter from /proc/PID/stat ('Z' for a zombie), or None where /proc cannot tell."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read().decode("ascii", "replace")
        return stat[stat.rindex(")") + 2:].split(" ", 1)[0]
    except (OSError, ValueError):
        return None


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


def _is_alive(pid: int) -> bool:
    _reap(pid)  # only succeeds for our own children; harmless otherwise
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return _proc_state(pid) != "Z"


def _is_harness_process(pid: int) -> Optional[bool]:
    """True/False from the process's command line, or None where /proc is not available."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmdline = f.read().decode("utf-8", "replace")
    except FileNotFoundError:
        return False if Path("/proc/self").exists() else None
    except OSError:
        return None
    return any(marker in cmdline for marker in _PROCESS_MARKERS)


def _wait_gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _is_alive(pid):
            return True
        time.sleep(0.05)
    return not _is_alive(pid)


def stop_pid(pid: int, timeout: float = STOP_TIMEOUT_S) -> bool:
    """Stops a server this harness started, by its PID: SIGTERM, then SIGKILL after ``timeout`` s.

    Returns True when it stopped a running server, False when there was nothing to stop (the process
    is gone, or the PID now belongs to a process that is not one of the harness's servers, which is
    left alone). Raises LocalKinesisError when the process survives SIGKILL.
    """
    pid = int(pid)
    if pid <= 1:
        raise ValueError(f"refusing to signal PID {pid}")
    if not _is_alive(pid):
        return False
    if _is_harness_process(pid) is False:
        _log(f"PID {pid} is not a local Kinesis server started by this harness: left alone")
        return False
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return False
    if _wait_gone(pid, timeout):
        return True
    _log(f"PID {pid} did not stop within {timeout:.0f} s of SIGTERM: sending SIGKILL")
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    if _wait_gone(pid, 5.0):
        return True
    raise LocalKinesisError(f"PID {pid} is still running after SIGKILL")


def _tail(path: Path, lines: int = 40) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - 64 * 1024))
            text = f.read().decode("utf-8", "replace")
    except OSError as e:
        return f"(could not read {path}: {e})"
    return "\n".join(text.splitlines()[-lines:])


def _answers(port: int, timeout: float = 2.0) -> bool:
    """True once the server gives any well-formed HTTP response to a Kinesis API call."""
    conn = http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        conn.request("POST", "/", body=b"{}", headers=_PROBE_HEADERS)
        response = conn.getresponse()
        response.read()
        return True
    except (OSError, http.client.HTTPException):
        return False
    finally:
        conn.close()


# ---------------------------------------------------------------------------------------------
# Servers
# ---------------------------------------------------------------------------------------------

class LocalKinesis:
    """A running local Kinesis server. ``stop()`` it (or use it as a context manager)."""

    def __init__(self, kind: str, port: int, pid: int, log_path: Path, workdir: Path,
                 tls_port: Optional[int] = None, process: Optional[subprocess.Popen] = None,
                 persist_dir: Optional[Path] = None):
        self.kind = kind
        self.port = port
        self.pid = pid
        self.log_path = log_path
        self.workdir = workdir
        #: Where the server keeps its data across restarts (None: in memory only).
        self.persist_dir = persist_dir
        #: kinesis-mock's HTTPS (h2) port; None for kinesalite.
        self.tls_port = tls_port
        self._process = process
        self._stopped = False

    @property
    def endpoint(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def cbor_enabled(self) -> bool:
        """Whether Java clients may use CBOR. kinesalite corrupts record data sent over CBOR."""
        return self.kind != KINESALITE

    def is_running(self) -> bool:
        if self._stopped:
            return False
        if self._process is not None:
            return self._process.poll() is None
        return _is_alive(self.pid)

    def log_tail(self, lines: int = 40) -> str:
        """The last lines of the server's log (what it printed before it died, say)."""
        return _tail(self.log_path, lines)

    def stop(self) -> None:
        """SIGTERM, wait up to 10 s, SIGKILL, reap. Safe to call more than once."""
        if self._stopped:
            return
        self._stopped = True
        if self._process is None:
            stop_pid(self.pid)
            return
        process = self._process
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                _log(f"{self.kind} (PID {self.pid}) did not stop within {STOP_TIMEOUT_S:.0f} s: SIGKILL")
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                process.wait(timeout=10)

    def restart(self, down: float = 0.0, stop_at_exit: bool = True) -> "LocalKinesis":
        """Stops this server, stays down ``down`` seconds, starts the same kind again on the same port, with the same
        data folder, and returns the new one once it answers. With a ``persist_dir`` the streams and records written before
        the restart are still there (kinesalite keeps them in LevelDB; kinesis-mock only what it had saved,
        every second). Clients keep their endpoint: they see refused connections while it is down."""
        self.stop()
        time.sleep(down)  # an outage of that length is the point
        return start(self.kind, self.workdir, self.persist_dir, port=self.port, stop_at_exit=stop_at_exit)

    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "endpoint": self.endpoint,
            "port": self.port,
            "pid": self.pid,
            "log": str(self.log_path),
            "cborEnabled": self.cbor_enabled,
        }

    def to_json(self) -> str:
        """One line of JSON: kind, endpoint, port, pid, log, cborEnabled."""
        return json.dumps(self.to_dict(), separators=(",", ":"))

    def __enter__(self) -> "LocalKinesis":
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self.is_running() else "stopped"
        return f"LocalKinesis({self.kind!r}, endpoint={self.endpoint!r}, pid={self.pid}, {state})"


def _command_and_env(kind: str, ports: List[int], persist_dir: Optional[Path]):
    node = _tool("SPARK_KINESIS_NODE", "node")
    env = dict(os.environ)
    if kind == KINESIS_MOCK:
        plain_port, tls_port = ports
        for name in ("INITIALIZE_STREAMS", "PERSIST_FILE_NAME"):
            env.pop(name, None)
        env.update({
            "KINESIS_MOCK_PLAIN_PORT": str(plain_port),
            "KINESIS_MOCK_TLS_PORT": str(tls_port),
            "KINESIS_MOCK_CERT_PATH": str(KINESIS_MOCK_CERT),
            "LOG_LEVEL": "WARN",
            "SHARD_LIMIT": str(SHARD_LIMIT),
            "ON_DEMAND_STREAM_COUNT_LIMIT": "100",
            "AWS_ACCOUNT_ID": "000000000000",
            "AWS_REGION": "us-east-1",
            # Bounds its graceful shutdown after SIGTERM (loopback.js normally makes it immediate).
            "CATS_EFFECT_SHUTDOWN_HOOK_TIMEOUT": "5s",
        })
        for name in ("CREATE_STREAM", "DELETE_STREAM", "MERGE_SHARDS", "SPLIT_SHARD",
                     "UPDATE_SHARD_COUNT", "UPDATE_STREAM_MODE", "REGISTER_STREAM_CONSUMER",
                     "DEREGISTER_STREAM_CONSUMER", "START_STREAM_ENCRYPTION",
                     "STOP_STREAM_ENCRYPTION"):
            env[f"{name}_DURATION"] = KINESIS_MOCK_STATE_DURATION
        if persist_dir is not None:
            env.update({
                "SHOULD_PERSIST_DATA": "true",
                "LOAD_DATA_IF_EXISTS": "true",
                "PERSIST_PATH": str(persist_dir),
                "PERSIST_INTERVAL": "1s",
            })
        else:
            env.update({"SHOULD_PERSIST_DATA": "false", "LOAD_DATA_IF_EXISTS": "false"})
        command = [node, "-r", str(LOOPBACK_PRELOAD), str(KINESIS_MOCK_MAIN)]
        return command, env, tls_port
    (port,) = ports
    env.pop("KINESALITE_PATH", None)
    command = [node, "-r", str(LOOPBACK_PRELOAD), str(KINESALITE_MAIN), str(port)]
    if persist_dir is not None:
        command.append(str(persist_dir))
    return command, env, None


def _start_once(kind: str, workdir: Path, persist_dir: Optional[Path], port: Optional[int]) -> LocalKinesis:
    if port is None:
        ports = _free_ports(2 if kind == KINESIS_MOCK else 1)
    else:
        ports = [port, *_free_ports(1)] if kind == KINESIS_MOCK else [port]
    command, env, tls_port = _command_and_env(kind, ports, persist_dir)
    log_path = workdir / f"{kind}-{ports[0]}.log"
    with open(log_path, "ab") as log_file:
        process = subprocess.Popen(
            command, cwd=workdir, env=env, stdin=subprocess.DEVNULL, stdout=log_file,
            stderr=subprocess.STDOUT, close_fds=True,
            # Its own session: it outlives the CLI that started it and a Ctrl-C of the terminal.
            start_new_session=True)
    server = LocalKinesis(kind, ports[0], process.pid, log_path, workdir, tls_port, process, persist_dir)
    started = time.monotonic()
    deadline = started + START_TIMEOUT_S
    while True:
        if process.poll() is not None:
            break
        if _answers(ports[0]) and process.poll() is None:
            _log(f"{kind} answers at {server.endpoint} (PID {process.pid}) after "
                 f"{time.monotonic() - started:.2f} s; log: {log_path}")
            return server
        if time.monotonic() > deadline:
            break
        time.sleep(0.1)
    exit_code = process.poll()
    server.stop()
    reason = (f"exited with code {exit_code}" if exit_code is not None
              else f"did not answer within {START_TIMEOUT_S:.0f} s")
    raise LocalKinesisError(f"{kind} {reason}; last lines of {log_path}:\n{_tail(log_path)}")


def start(kind: str, workdir: Union[str, os.PathLike, None] = None,
          persist_dir: Union[str, os.PathLike, None] = None, *,
          port: Optional[int] = None, stop_at_exit: bool = True) -> LocalKinesis:
    """Starts a local Kinesis server on free ports of 127.0.0.1 and waits until it answers.

    kind: "kinesis-mock" or "kinesalite".
    workdir: where the server runs and writes its log (default: a fresh temporary folder).
    persist_dir: keep the server's data in this folder across restarts (default: memory only).
    port: listen on this port of 127.0.0.1 (kinesis-mock's plain HTTP port) instead of a free one, so that a
        restarted server (``LocalKinesis.restart``) keeps its endpoint. A port in use fails the start.
    stop_at_exit: also stop the server when this Python process exits (the CLI passes False).
    """
    if kind not in KINDS:
        raise ValueError(f"unknown local Kinesis server {kind!r}: expected one of {', '.join(KINDS)}")
    ensure_installed()
    if workdir is None:
        workdir_path = Path(tempfile.mkdtemp(prefix=f"spark-kinesis-{kind}-"))
    else:
        workdir_path = Path(workdir).resolve()
        workdir_path.mkdir(parents=True, exist_ok=True)
    persist_path = None
    if persist_dir is not None:
        persist_path = Path(persist_dir).resolve()
        persist_path.mkdir(parents=True, exist_ok=True)
    attempts = 3
    for attempt in range(1, attempts + 1):
        try:
            server = _start_once(kind, workdir_path, persist_path, port)
        except LocalKinesisError as e:
            # A port picked as free can be taken by someone else before the server binds it.
            text = str(e)
            if port is None and attempt < attempts and ("EADDRINUSE" in text or "ddress already in use" in text):
                _log(f"{kind}: port taken before the server bound it; retrying on other ports")
                continue
            raise
        if stop_at_exit:
            atexit.register(server.stop)
        return server
    raise AssertionError("unreachable")


# ---------------------------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------------------------

def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="local_kinesis.py",
        description="Start and stop local Kinesis servers (kinesis-mock, kinesalite) on 127.0.0.1.")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("install", help="install the servers (npm ci) if needed")
    start_parser = commands.add_parser(
        "start", help="start a server, print one JSON line describing it and leave it running")
    start_parser.add_argument("kind", choices=KINDS)
    start_parser.add_argument("--workdir", help="folder for the server's log (default: a new temp folder)")
    start_parser.add_argument("--persist-dir", help="keep the server's data in this folder")
    start_parser.add_argument("--port", type=int, help="listen on this port (default: a free one)")
    stop_parser = commands.add_parser("stop", help="stop a server started by `start`, by its PID")
    stop_parser.add_argument("pid", type=int)
    args = parser.parse_args(argv)

    try:
        if args.command == "install":
            ensure_installed()
            _log("the local Kinesis servers are installed")
        elif args.command == "start":
            server = start(args.kind, workdir=args.workdir, persist_dir=args.persist_dir, port=args.port,
                           stop_at_exit=False)
            sys.stdout.write(server.to_json() + "\n")
            sys.stdout.flush()
        else:
            if stop_pid(args.pid):
                _log(f"stopped PID {args.pid}")
            else:
                _log(f"nothing to stop for PID {args.pid}")
    except (LocalKinesisError, ValueError) as e:
        _log(f"error: {e}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
