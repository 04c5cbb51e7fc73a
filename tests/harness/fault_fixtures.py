"""pytest fixture for FaultProxy (fault_proxy.py).

* ``fault_proxy``: a fresh FaultProxy in front of the session's ``kinesalite_server`` for each test,
  stopped when the test ends. Point clients at ``fault_proxy.endpoint``; for Spark,
  ``connector_options(fault_proxy)`` works as it does for a server (CBOR off). The server itself stays
  reachable as ``fault_proxy.upstream_endpoint`` (to check what really landed, bypassing the faults).
* ``create_stream(proxy, stream, shards)`` and ``landed(proxy, stream)``: create a stream, and read every record
  it holds, on the server behind the proxy (with boto3, so the proxy neither counts nor faults these calls).

Import it into a test module (it is not registered as a plugin)::

    from harness.fault_fixtures import fault_proxy  # noqa: F401 (pytest fixture)
"""

from __future__ import annotations

from typing import Any, Dict, Iterator, List

import pytest

from . import streams
from .fault_proxy import FaultProxy

__all__ = ["fault_proxy", "create_stream", "landed"]


@pytest.fixture
def fault_proxy(request) -> Iterator[FaultProxy]:
    server = request.getfixturevalue("kinesalite_server")
    with FaultProxy(server) as proxy:
        yield proxy


def create_stream(proxy: FaultProxy, stream: str, shards: int) -> None:
    """Creates ``stream`` with ``shards`` shards on the server behind the proxy and waits until it is ACTIVE."""
    streams.create_stream(streams.client(proxy.upstream_endpoint), stream, shards)


def landed(proxy: FaultProxy, stream: str) -> List[Dict[str, Any]]:
    """What the server behind the proxy holds in ``stream`` (``streams.read_all``), read behind the proxy's back."""
    return streams.read_all(streams.client(proxy.upstream_endpoint), stream)
