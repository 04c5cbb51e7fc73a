"""moto's server (AWS's STS and Glue APIs, among others) on a free loopback port, stopped by its own PID."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Iterator

START_TIMEOUT_S = 60.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _executable() -> Path:
    """``moto_server`` beside this interpreter, else the project's dev venv's (the compat venvs have no moto)."""
    here = Path(sys.executable).with_name("moto_server")
    if here.exists():
        return here
    return Path(__file__).resolve().parents[2] / ".venv" / "bin" / "moto_server"


@contextlib.contextmanager
def running(log_dir: Path) -> Iterator[str]:
    """Start ``moto_server`` of this interpreter's environment; yield its endpoint; stop it by PID."""
    port = free_port()
    endpoint = f"http://127.0.0.1:{port}"
    with open(log_dir / "moto.log", "w") as log:
        server = _executable()
        process = subprocess.Popen([str(server), "-H", "127.0.0.1", "-p", str(port)], stdout=log,
                                   stderr=subprocess.STDOUT, start_new_session=True)
        try:
            deadline = time.monotonic() + START_TIMEOUT_S
            while True:
                try:
                    urllib.request.urlopen(f"{endpoint}/moto-api/data.json", timeout=2).read()
                    break
                except OSError:
                    if process.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError(f"moto_server did not start on {endpoint} (see {log_dir / 'moto.log'})")
                    time.sleep(0.1)
            yield endpoint
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)


@contextlib.contextmanager
def glue_registry(log_dir: Path, registry: str) -> Iterator[tuple]:
    """moto's Glue with a registry named ``registry`` (moto keeps at most 10 registries, so each test module makes
    its own): its endpoint, a boto3 Glue client for it, and the registry's name."""
    import boto3

    with running(log_dir) as endpoint:
        client = boto3.client("glue", endpoint_url=endpoint, region_name="us-east-1",
                              aws_access_key_id="local-test-key", aws_secret_access_key="local-test-secret")
        client.create_registry(RegistryName=registry)
        yield endpoint, client, registry
