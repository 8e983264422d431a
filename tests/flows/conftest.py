"""One Prefect test harness for the flow tests a worker runs (it costs ~15-20 s to start)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import OWN_SERVER_FLOW_FILES

# OWN_SERVER_FLOW_FILES: files whose tests run every Prefect client in a subprocess of their own, against a server
# they start (the local server, its template database, the CLI's early start; each clears PREFECT_API_URL): the
# harness serves none of their calls. They run without it, each as its own xdist unit of work (tests/conftest.py),
# so that they need not wait for the worker that holds the harness, and the harness stops sooner.

# package scope: the harness (a Prefect server in a subprocess, whose services keep polling) stops when the
# worker leaves tests/flows for the integration files, instead of using CPU until the session ends. Under
# xdist the flow files that use it are one unit of work on one worker (tests/conftest.py), so it starts once.
@pytest.fixture(scope="package")
def prefect_harness():
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=180):
        yield


# module scope, autouse: set up before the module's own fixtures (some run flows), as the package fixture was
@pytest.fixture(scope="module", autouse=True)
def _harness_for_flow_files(request):
    """Every flow test runs under the harness, but those of OWN_SERVER_FLOW_FILES."""
    if Path(str(request.module.__file__)).name not in OWN_SERVER_FLOW_FILES:
        request.getfixturevalue("prefect_harness")
