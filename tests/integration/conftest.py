"""The real Prefect servers the integration files share (tests/prefect_servers.py).

- ``prefect_serve_server``: test_prefect_server.py and test_deploy_paths.py (`assay serve`, `prefect deploy --all`,
  `assay deploy --pool`; the scheduler on);
- ``prefect_pool_server``: test_prefect_workers.py and test_prefect_scale_out.py (process work pools and their
  workers; the scheduler off).

Each is started once per session (tests/conftest.py hands the two files of a pair to one xdist worker as one unit)
and stopped as soon as the next test of that worker does not use it, instead of polling for the rest of the
session; a later test that uses it again starts it again.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.prefect_servers import POOL_SETTINGS, SERVE_SETTINGS, PrefectServer
from tests.seeded_vectors import warm_home

# the embedding cache every user of a server shares (PrefectServer.client_env) starts with the vectors of the texts
# its users' processes embed: their CLI commands, `assay serve` and the workers' flow runs load no model for them
VECTORS = Path(__file__).resolve().parents[1] / "fixtures"

_SERVERS: dict[str, PrefectServer] = {}  # fixture name -> the server, once its fixture ran


@pytest.fixture(scope="session")
def prefect_serve_server(tmp_path_factory):
    srv = _SERVERS["prefect_serve_server"] = PrefectServer(tmp_path_factory.mktemp("prefect-serve"), SERVE_SETTINGS)
    with warm_home(srv.root, VECTORS / "prefect-serve-vectors.npz"):
        yield srv
        srv.stop()


@pytest.fixture(scope="session")
def prefect_pool_server(tmp_path_factory):
    srv = _SERVERS["prefect_pool_server"] = PrefectServer(tmp_path_factory.mktemp("prefect-pool"), POOL_SETTINGS)
    with warm_home(srv.root, VECTORS / "prefect-pool-vectors.npz"):
        yield srv
        srv.stop()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    """After the test's own teardown (its module fixtures may still talk to the server): stop a shared server the
    next test does not use."""
    try:
        return (yield)
    finally:
        for name, srv in _SERVERS.items():
            if name in item.fixturenames and (nextitem is None or name not in nextitem.fixturenames):
                srv.stop()
