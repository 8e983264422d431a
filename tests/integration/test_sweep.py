"""Orphaned step collections are swept; active and recent runs keep theirs."""

from __future__ import annotations

import datetime as dt
import time

from assay.models import DiscoveryRun, RunStatus
from assay.services.maintenance import sweep_run_collections
from assay.settings import load_settings
from assay.store import open_store
from assay.vectors.index import open_index, run_collection


def test_sweep(tmp_path):
    settings = load_settings()
    store, index = open_store(settings), open_index(settings)
    now = time.time()
    old = dt.datetime.fromtimestamp(now - 3 * 86400, dt.timezone.utc)
    recent = dt.datetime.fromtimestamp(now - 3600, dt.timezone.utc)
    store.create_run(DiscoveryRun(id="sweep-active", project_id="p", status=RunStatus.running))
    store.create_run(DiscoveryRun(id="sweep-old", project_id="p", status=RunStatus.completed, finished_at=old))
    store.create_run(DiscoveryRun(id="sweep-recent", project_id="p", status=RunStatus.failed, finished_at=recent))
    names = {r: run_collection(r) for r in ("sweep-active", "sweep-old", "sweep-recent", "sweep-unknown")}
    for n in names.values():
        index.ensure(n, 4)
    dropped = sweep_run_collections(store, index, now=now)
    assert names["sweep-old"] in dropped and names["sweep-unknown"] in dropped
    assert index.exists(names["sweep-active"]) and index.exists(names["sweep-recent"])
    assert not index.exists(names["sweep-old"])


def test_shared_server_leaves_unknown_collections(monkeypatch):
    settings = load_settings()
    store, index = open_store(settings), open_index(settings)
    index.ensure(run_collection("someone-elses-run"), 4)
    monkeypatch.setattr(index, "local", False)  # as with QDRANT_URL: other installations may share it
    assert run_collection("someone-elses-run") not in sweep_run_collections(store, index)
    assert index.exists(run_collection("someone-elses-run"))


def test_a_crashed_run_loses_its_collection_at_once():
    """A run whose process was killed (its hooks never ran) is marked crashed, and its collection goes at the
    first sweep, not a day later as a run that ended normally."""
    import socket
    import subprocess

    from assay.models import utcnow

    settings = load_settings()
    store, index = open_store(settings), open_index(settings)
    gone = subprocess.Popen(["true"])
    gone.wait()
    store.create_run(DiscoveryRun(id="sweep-killed", project_id="p", status=RunStatus.running,
                                  host=socket.gethostname(), pid=gone.pid, heartbeat_at=utcnow()))
    store.create_run(DiscoveryRun(id="sweep-done", project_id="p", status=RunStatus.completed, finished_at=utcnow()))
    for r in ("sweep-killed", "sweep-done"):
        index.ensure(run_collection(r), 4)
    dropped = sweep_run_collections(store, index)
    assert store.get_run("sweep-killed").status == RunStatus.crashed
    assert run_collection("sweep-killed") in dropped and not index.exists(run_collection("sweep-killed"))
    assert index.exists(run_collection("sweep-done"))
