"""One Prefect test harness for the flow tests a worker runs (it costs ~15-20 s to start)."""

from __future__ import annotations

import pytest


# package scope: the harness (a Prefect server in a subprocess, whose services keep polling) stops when the
# worker leaves tests/flows for the integration files, instead of using CPU until the session ends. Under
# xdist the flow files are one unit of work on one worker (tests/conftest.py), so it starts once.
@pytest.fixture(scope="package", autouse=True)
def prefect_harness():
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=180):
        yield
