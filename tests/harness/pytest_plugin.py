"""pytest fixtures that start the local Kinesis servers once per test session.

Loaded from tests/conftest.py with ``pytest_plugins = ["harness.pytest_plugin"]``.

* ``kinesis_mock_server``: a running kinesis-mock (LocalKinesis), stopped at the end of the session.
* ``kinesalite_server``: the same for kinesalite.
* ``local_kinesis_server``: parametrized over both (test ids ``[kinesis-mock]`` and ``[kinesalite]``);
  it reuses the two servers above, so each kind is started at most once per session.

Servers are started only when a test asks for them. Their logs are in pytest's temporary folder.
"""

from __future__ import annotations

import pytest

from . import local_kinesis

_FIXTURE_BY_KIND = {
    local_kinesis.KINESIS_MOCK: "kinesis_mock_server",
    local_kinesis.KINESALITE: "kinesalite_server",
}


def _serve(kind, tmp_path_factory):
    server = local_kinesis.start(kind, workdir=tmp_path_factory.mktemp(kind))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def kinesis_mock_server(tmp_path_factory):
    yield from _serve(local_kinesis.KINESIS_MOCK, tmp_path_factory)


@pytest.fixture(scope="session")
def kinesalite_server(tmp_path_factory):
    yield from _serve(local_kinesis.KINESALITE, tmp_path_factory)


@pytest.fixture(scope="session", params=list(local_kinesis.KINDS), ids=list(local_kinesis.KINDS))
def local_kinesis_server(request):
    return request.getfixturevalue(_FIXTURE_BY_KIND[request.param])
