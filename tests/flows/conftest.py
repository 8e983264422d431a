"""One Prefect test harness for the flow tests a worker runs (it costs ~15-20 s to start)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import OWN_SERVER_FLOW_FILES
from tests.seeded_vectors import known_vectors

VECTORS = Path(__file__).resolve().parents[1] / "fixtures" / "flow-vectors.npz"


@pytest.fixture(scope="package", autouse=True)
def _flow_vectors():
    """The embedding models' vectors of the texts the flow tier embeds in-process (tests/seeded_vectors.py:
    known_vectors); the files with servers of their own embed in subprocesses, which this does not reach."""
    with known_vectors(VECTORS):
        yield

# OWN_SERVER_FLOW_FILES: files whose tests run every Prefect client in a subprocess of their own, against a server
# they start (the local server, its template database, the CLI's early start; each clears PREFECT_API_URL): the
# harness serves none of their calls. They run without it, each as its own xdist unit of work (tests/conftest.py),
# so that they need not wait for the worker that holds the harness, and the harness stops sooner.

SEEDED: list[Path] = []  # the harness databases seeded from the template (tests/flows/test_seeded_servers.py)


# package scope: the harness (a Prefect server in a subprocess, whose services keep polling) stops when the
# worker leaves tests/flows for the integration files, instead of using CPU until the session ends. Under
# xdist the flow files that use it are one unit of work on one worker (tests/conftest.py), so it starts once.
@pytest.fixture(scope="package")
def prefect_harness(monkeypatch_package):
    import tempfile

    import prefect.testing.utilities as harness

    from tests.prefect_servers import seed_database

    def seeded_mkdtemp():
        """The harness's database folder (its one ``mkdtemp``) with the run's template database in it: the
        harness server starts on it without running Prefect's migrations."""
        folder = tempfile.mkdtemp()
        SEEDED.append(Path(folder) / "prefect-test.db")
        seed_database(SEEDED[-1])
        return folder

    monkeypatch_package.setattr(harness, "mkdtemp", seeded_mkdtemp)
    with harness.prefect_test_harness(server_startup_timeout=180):
        yield


@pytest.fixture(scope="package")
def monkeypatch_package():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


# module scope, autouse: set up before the module's own fixtures (some run flows), as the package fixture was
@pytest.fixture(scope="module", autouse=True)
def _harness_for_flow_files(request):
    """Every flow test runs under the harness, but those of OWN_SERVER_FLOW_FILES."""
    if Path(str(request.module.__file__)).name not in OWN_SERVER_FLOW_FILES:
        request.getfixturevalue("prefect_harness")
