"""One Prefect test harness for every flow test (it costs ~15-20 s to start)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session", autouse=True)
def prefect_harness():
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=180):
        yield
