"""One Prefect test harness for the flow tests a worker runs (it costs ~15-20 s to start)."""

from __future__ import annotations

import pytest


# package scope: the harness (a Prefect server in a subprocess, whose services keep polling) stops when the
# worker leaves tests/flows for the integration files, instead of using CPU until the session ends. The flow
# files are handed out one after the other (tests/conftest.py orders them), so a worker starts it once.
@pytest.fixture(scope="package", autouse=True)
def prefect_harness():
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=180):
        yield
