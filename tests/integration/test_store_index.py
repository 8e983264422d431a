"""The vector index kept in the result store (``ASSAY_VECTOR_INDEX=store``): the same answers as Qdrant,
shared by several processes at once, dropped by the run's hook and swept as an orphan like a Qdrant
collection. Run on tinymongo (one host) and on a MongoDB wire-protocol server (nx-27017: a pool)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pymongo
import pytest
import tinymongo
from qdrant_client import QdrantClient

from assay.models import DiscoveryRun, RunStatus
from assay.services.maintenance import sweep_run_collections
from assay.settings import load_settings, vector_index_kind
from assay.store.store import Store
from assay.vectors.index import VectorIndex, run_collection
from assay.vectors.store_index import StoreIndex

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(params=["tinymongo", "mongodb"])
def store(request, tmp_path):
    if request.param == "tinymongo":
        client = tinymongo.TinyMongoClient(str(tmp_path / "store"), backend="sqlite")
        yield Store(client["assay"], backend="tinymongo")
    else:
        uri = request.getfixturevalue("mongo_uri")
        client = pymongo.MongoClient(uri, serverSelectionTimeoutMS=5000)
        name = f"v_{tmp_path.name[-20:].replace('-', '_')}"
        yield Store(client[name], backend="mongodb")
        client.drop_database(name)
        client.close()


def _points(n: int, dim: int = 16, seed: int = 3):
    rng = np.random.default_rng(seed)
    return [(f"step-{i}", rng.normal(size=dim).tolist(), {"step": i, "has_error": i % 7 == 0}) for i in range(n)]


def test_same_hits_scores_and_payloads_as_qdrant(store):
    idx = StoreIndex(store.db, backend=store.backend)
    qd = VectorIndex(QdrantClient(location=":memory:"), local=True)
    items = _points(60)
    for ix in (idx, qd):
        ix.ensure("c", 16)
        ix.upsert("c", items)
        ix.delete("c", ["step-5"])
        ix.set_payloads("c", {"step-6": {"note": "x"}})
    q = np.random.default_rng(9).normal(size=16).tolist()
    ours, theirs = idx.search("c", q, top_k=8), qd.search("c", q, top_k=8)
    assert [h.key for h in ours] == [h.key for h in theirs]
    assert np.allclose([h.score for h in ours], [h.score for h in theirs], atol=1e-5)
    assert [h.payload for h in ours] == [h.payload for h in theirs]
    assert idx.count("c") == qd.count("c") == 59
    assert idx.payloads("c") == qd.payloads("c") and idx.payloads("c")["step-6"]["note"] == "x"
    got = idx.vectors("c", ["step-1", "step-5"])
    assert list(got) == ["step-1"] and np.allclose(got["step-1"][0], items[1][1], atol=1e-6)
    assert len(idx.search("c", q, top_k=60, min_score=0.3)) == len(qd.search("c", q, top_k=60, min_score=0.3))
    assert idx.collections("c") == ["c"] and idx.drop("c") and not idx.exists("c") and idx.search("c", q, 3) == []


def test_a_write_by_one_process_is_seen_by_another(store, tmp_path):
    """Two indexes over one store (two processes' views): a search never answers from a stale matrix."""
    a, b = StoreIndex(store.db, backend=store.backend), StoreIndex(store.db, backend=store.backend)
    a.ensure("c", 16)
    a.upsert("c", _points(10))
    q = _points(10)[4][1]
    assert b.search("c", q, 1)[0].key == "step-4"
    a.upsert("c", [("step-99", q, {"step": 99})])  # an exact match arrives after b cached the collection
    assert {h.key for h in b.search("c", q, 2)} == {"step-4", "step-99"}
    a.drop("c")
    assert b.search("c", q, 2) == [] and b.count("c") == 0


CHILD = """
import json, sys, time
from assay.settings import load_settings
from assay.vectors.index import open_index
idx = open_index(load_settings())
t = time.time()
while time.time() - t < 60 and not idx.exists(sys.argv[1]):
    time.sleep(0.1)
hits = idx.search(sys.argv[1], [1.0] + [0.0] * 15, 2)
print(json.dumps([h.key for h in hits]))
"""


def test_processes_share_the_index_while_one_holds_it_open(tmp_path):
    """Qdrant local mode admits one process per folder: with ``ASSAY_VECTOR_INDEX=store`` a second process
    searches while the first still has the index open (the embedded store under one ``ASSAY_HOME``)."""
    env = {**os.environ, "ASSAY_HOME": str(tmp_path / "home"), "ASSAY_VECTOR_INDEX": "store",
           "PYTHONPATH": str(REPO)}
    for k in ("MONGODB_URI", "QDRANT_URL"):
        env.pop(k, None)
    prev = {k: os.environ.get(k) for k in ("ASSAY_HOME", "ASSAY_VECTOR_INDEX")}
    os.environ.update({"ASSAY_HOME": env["ASSAY_HOME"], "ASSAY_VECTOR_INDEX": "store"})
    try:
        from assay.store import open_store
        from assay.vectors.index import open_index

        settings = load_settings()
        assert vector_index_kind(settings) == "store"
        idx = open_index(settings)  # held open by this process for the rest of the test
        child = subprocess.Popen([sys.executable, "-c", CHILD, "shared"], env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        time.sleep(0.5)
        idx.ensure("shared", 16)
        idx.upsert("shared", [("near", [1.0] + [0.0] * 15, {}), ("far", [0.0] * 15 + [1.0], {}),
                              ("mid", [0.7, 0.7] + [0.0] * 14, {})])
        out, err = child.communicate(timeout=120)
        assert child.returncode == 0, err[-2000:]
        assert json.loads(out.strip().splitlines()[-1]) == ["near", "mid"]

        # the flow hook's drop and the orphan sweep work on it as on Qdrant
        store = open_store(settings)
        store.create_run(DiscoveryRun(id="idx-old", project_id="p", status=RunStatus.completed,
                                      finished_at=DiscoveryRun.model_fields["started_at"].default_factory()))
        for r in ("idx-old", "idx-unknown"):
            idx.ensure(run_collection(r), 4)
        dropped = sweep_run_collections(store, idx, now=time.time() + 3 * 86400)
        assert set(dropped) == {run_collection("idx-old"), run_collection("idx-unknown")}
        assert not idx.exists(run_collection("idx-old"))
    finally:
        for k, v in prev.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def test_the_index_kind_is_one_clear_choice(monkeypatch):
    from assay.errors import ConfigError

    for k in ("QDRANT_URL", "MONGODB_URI", "ASSAY_VECTOR_INDEX"):
        monkeypatch.delenv(k, raising=False)
    assert vector_index_kind(load_settings()) == "local"
    monkeypatch.setenv("MONGODB_URI", "mongodb://127.0.0.1:1/x")
    assert vector_index_kind(load_settings()) == "store"
    monkeypatch.setenv("ASSAY_VECTOR_INDEX", "local")
    assert vector_index_kind(load_settings()) == "local"
    monkeypatch.setenv("QDRANT_URL", "http://127.0.0.1:6333")
    assert vector_index_kind(load_settings()) == "server"
    monkeypatch.delenv("QDRANT_URL")
    monkeypatch.setenv("ASSAY_VECTOR_INDEX", "faiss")
    with pytest.raises(ConfigError, match="ASSAY_VECTOR_INDEX='faiss'"):
        load_settings() and vector_index_kind(load_settings())
