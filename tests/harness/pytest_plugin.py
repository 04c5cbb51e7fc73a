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


# The session's servers, so that a failing test can say when one of them has died under it.
_SESSION_SERVERS = []


def _serve(kind, tmp_path_factory):
    server = local_kinesis.start(kind, workdir=tmp_path_factory.mktemp(kind))
    _SESSION_SERVERS.append(server)
    try:
        yield server
    finally:
        _SESSION_SERVERS.remove(server)
        server.stop()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Adds the log of a session server that is no longer running to the report of a failed test."""
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        for server in _SESSION_SERVERS:
            if not server.is_running():
                report.sections.append((f"{server.kind} (session server) has exited; its log ends",
                                        server.log_tail()))


@pytest.fixture(scope="session")
def kinesis_mock_server(tmp_path_factory):
    yield from _serve(local_kinesis.KINESIS_MOCK, tmp_path_factory)


@pytest.fixture(scope="session")
def kinesalite_server(tmp_path_factory):
    yield from _serve(local_kinesis.KINESALITE, tmp_path_factory)


@pytest.fixture(scope="session", params=list(local_kinesis.KINDS), ids=list(local_kinesis.KINDS))
def local_kinesis_server(request):
    return request.getfixturevalue(_FIXTURE_BY_KIND[request.param])
