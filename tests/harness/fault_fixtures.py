"""pytest fixture for FaultProxy (fault_proxy.py).

* ``fault_proxy``: a fresh FaultProxy in front of the session's ``kinesalite_server`` for each test,
  stopped when the test ends. Point clients at ``fault_proxy.endpoint``; for Spark,
  ``connector_options(fault_proxy)`` works as it does for a server (CBOR off). The server itself stays
  reachable as ``fault_proxy.upstream_endpoint`` (to check what really landed, bypassing the faults).

Import it into a test module (it is not registered as a plugin)::

    from harness.fault_fixtures import fault_proxy  # noqa: F401 (pytest fixture)
"""

from __future__ import annotations

from typing import Iterator

import pytest

from .fault_proxy import FaultProxy

__all__ = ["fault_proxy"]


@pytest.fixture
def fault_proxy(request) -> Iterator[FaultProxy]:
    server = request.getfixturevalue("kinesalite_server")
    with FaultProxy(server) as proxy:
        yield proxy
