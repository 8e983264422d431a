"""The embedding cache (``$ASSAY_HOME/embeddings.sqlite``): a text embedded once is read back by another
process without loading the model, with the vector the model gives; the cache is per model; a broken cache
never fails a caller; and the scipy/torch import race stays fixed without ``import assay.stats`` importing
torch."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np

SCRIPT = """
import json, sys
import numpy as np
from assay.vectors.embedder import get_embedder, is_loaded
e = get_embedder()
texts = json.loads(sys.argv[1])
v = e.embed(texts)
np.save(sys.argv[2], v)
print(json.dumps({"hits": getattr(e, "hits", None), "misses": getattr(e, "misses", None), "loaded": is_loaded(e), "torch": "torch" in sys.modules,
                  "dim": e.dim}))
"""


def _run(tmp_path, texts, name, **env):
    r = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(texts), str(tmp_path / name)],
                       env=dict(os.environ, ASSAY_HOME=str(tmp_path / "home"), **env), capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1]), np.load(tmp_path / name)


def test_a_second_process_reads_vectors_back_without_the_model(tmp_path, monkeypatch):
    from assay.vectors import embedder as E

    texts = ["revenue by channel", "churned customers by month", "revenue by channel"]
    first, v1 = _run(tmp_path, texts, "a.npy")
    assert first["misses"] == 2 and first["hits"] == 1 and first["loaded"] and first["dim"] == 384
    second, v2 = _run(tmp_path, texts, "b.npy")
    assert second == {"hits": 3, "misses": 0, "loaded": False, "torch": False, "dim": 384}
    assert np.allclose(v1, v2, atol=1e-6) and np.allclose(v2[0], v2[2])

    # a new text among cached ones: only it goes to the model, and the cached ones keep the first process's vectors
    # (in this process, with a stand-in for the model behind the same cache file: each real load is ~5 s of CPU)
    class Recording:
        name, dim, texts = E.get_embedder().name, 384, []

        def embed(self, batch, batch_size=64):
            self.texts += batch
            return np.ones((len(batch), 384), dtype=np.float32)

    model = Recording()
    third = E.CachedEmbedder(model, path=tmp_path / "home" / E.CACHE_FILE)
    v3 = third.embed(texts[:2] + ["orders per warehouse"])
    assert model.texts == ["orders per warehouse"] and (third.misses, third.hits) == (1, 2)
    assert np.allclose(v3[:2], v1[:2], atol=1e-6)
    # ASSAY_EMBEDDING_CACHE=0: the model itself, no cache in front of it
    E._embedder.cache_clear()
    monkeypatch.setenv("ASSAY_EMBEDDING_CACHE", "0")
    try:
        off = E.get_embedder()
        assert not isinstance(off, E.CachedEmbedder) and off.name == model.name
    finally:
        E._embedder.cache_clear()


def test_the_cache_is_per_model_and_a_broken_one_is_bypassed(tmp_path):
    from assay.vectors.embedder import CachedEmbedder

    class Fake:
        def __init__(self, name, scale):
            self.name, self.scale, self.calls = name, scale, 0
            self.dim = 3

        def embed(self, texts, batch_size=64):
            self.calls += 1
            return np.array([[self.scale * len(t), 1.0, 0.0] for t in texts], dtype=np.float32)

    a = CachedEmbedder(Fake("m-a", 1.0), path=tmp_path / "cache.sqlite")
    b = CachedEmbedder(Fake("m-b", 2.0), path=tmp_path / "cache.sqlite")
    va, vb = a.embed(["xy"]), b.embed(["xy"])
    assert va[0][0] == 2.0 and vb[0][0] == 4.0 and a.model.calls == b.model.calls == 1
    assert a.embed(["xy"])[0][0] == 2.0 and a.model.calls == 1 and a.cached_dim() == 3
    (tmp_path / "dir.sqlite").mkdir()  # not a database: every read and write fails
    broken = CachedEmbedder(Fake("m-a", 1.0), path=tmp_path / "dir.sqlite")
    assert broken.embed(["xy", "z"])[:, 0].tolist() == [2.0, 1.0] and broken.dim == 3


def test_importing_the_flows_imports_no_torch_and_the_scipy_race_holds():
    code = """
import sys, threading
from assay.vectors.embedder import warm_up
import assay_flows.flows.rerun, assay_flows.flows.discovery, assay.cli
assert "torch" not in sys.modules and "sentence_transformers" not in sys.modules, "torch imported"
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    # the model loading in a thread while the statistical analyst (scipy.stats) imports: no half-imported torch
    race = """
from assay.vectors.embedder import warm_up
t = warm_up()
import assay.stats.detectors.significance, assay.stats.analyst
t.join()
from assay.vectors.embedder import get_embedder, is_loaded
assert is_loaded(get_embedder())
"""
    for _ in range(2):
        r = subprocess.run([sys.executable, "-c", race], capture_output=True, text=True, timeout=600,
                           env=dict(os.environ, ASSAY_EMBEDDING_CACHE="0"))
        assert r.returncode == 0, r.stderr[-3000:]
