"""tests/seeded_vectors.py: a replay reads its recorded vectors back through the product's embedding cache and
never runs the model for them; a text the file lacks is embedded by the model and warned about; the update flag
rewrites the file from what the run asked for."""

from __future__ import annotations

import numpy as np
import pytest

from assay.vectors import embedder as E
from tests import goldens
from tests.seeded_vectors import FILE, _read, _write, known_vectors, seeded_vectors


class CountingModel:
    """A deterministic stand-in for the embedding model (the thing a replay must not need): counts its texts."""

    dim = 4

    def __init__(self, name: str):
        self.name = name
        self.texts: list[str] = []

    def embed(self, texts, batch_size=64):
        self.texts += texts
        return np.array([[len(t), 1, 0, 0] for t in texts], dtype=np.float32)


@pytest.fixture
def model(tmp_path, monkeypatch):
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ASSAY_EMBEDDING_CACHE", raising=False)
    m = CountingModel("counting:seeded-vectors-test")
    e = E.CachedEmbedder(m)  # the cache over $ASSAY_HOME/embeddings.sqlite, as get_embedder makes it
    real = E._embedder
    monkeypatch.setattr(E, "_embedder", lambda name: e if name == m.name else real(name))
    return e, m


def test_seeded_texts_never_reach_the_model_and_a_missing_one_warns(tmp_path, model, monkeypatch):
    e, m = model
    monkeypatch.setattr(goldens, "_update", False)  # (under --update-goldens a missing text is written, not warned)
    rec = tmp_path / "rec"
    rec.mkdir()
    _write(rec / FILE, {e.name: {e._key("a step"): np.array([0, 0, 1, 0], dtype=np.float32)}})
    with seeded_vectors(rec):
        assert e.embed(["a step"]).tolist() == [[0, 0, 1, 0]]  # the recorded vector, not the model's
    assert m.texts == [] and e.misses == 0
    with pytest.warns(UserWarning, match="1 embedded text.*--update-goldens"), seeded_vectors(rec):
        e.embed(["a step", "a new insight"])
    assert m.texts == ["a new insight"]


def test_the_update_flag_writes_what_the_run_asked_for(tmp_path, model, monkeypatch):
    e, m = model
    rec = tmp_path / "rec"
    rec.mkdir()
    e.embed(["asked earlier"])  # in the cache before the replay: written too, as the replay asked for it
    monkeypatch.setattr(goldens, "_update", True)
    with seeded_vectors(rec):
        e.embed(["asked earlier", "a step"])
    got = _read(rec / FILE)[e.name]
    assert sorted(got) == sorted([e._key("asked earlier"), e._key("a step")])
    assert got[e._key("a step")].tolist() == [6, 1, 0, 0]


@pytest.fixture
def product_model(tmp_path, monkeypatch):
    """The product's model class (known_vectors answers for it) whose model run counts its texts."""
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ASSAY_EMBEDDING_CACHE", raising=False)
    run = CountingModel("st:known-vectors-test")  # in place of the sentence-transformers call
    monkeypatch.setattr(E.Embedder, "embed", lambda self, texts, batch_size=64: run.embed(texts))
    monkeypatch.setattr(E.Embedder, "_load", lambda self: pytest.fail("the model was loaded"))
    return E.CachedEmbedder(E.Embedder(run.name)), run


def test_known_vectors_answer_for_the_model_and_the_cache_keeps_what_it_answered(tmp_path, product_model,
                                                                                   monkeypatch):
    e, m = product_model
    path = tmp_path / "tier.npz"
    _write(path, {e.name: {e._key("a step"): np.array([0, 0, 1, 0], dtype=np.float32)}})
    monkeypatch.setattr(goldens, "_update", False)
    with known_vectors(path):
        assert e.embed(["a step"]).tolist() == [[0, 0, 1, 0]]  # from the file, not the model's run
        assert e.misses == 1 and m.texts == []  # the product saw a miss its model answered, as on a cold host
        assert E.Embedder(m.name).dim == 4  # the dimension too: no model load for it
    # what the product's cache holds is what the model would have put there: a later process reads it back
    assert e.embed(["a step"]).tolist() == [[0, 0, 1, 0]] and e.hits == 1 and m.texts == []
    with pytest.warns(UserWarning, match="embedded 1 text.*--update-goldens"), known_vectors(path):
        e.embed(["a new insight"])
    assert m.texts == ["a new insight"]


def test_known_vectors_update_merges_what_the_model_embedded_and_never_a_stand_in(tmp_path, model, product_model,
                                                                               monkeypatch):
    stand_in, counted = model  # a test's own stand-in model behind the cache: not the product's
    e, m = product_model
    path = tmp_path / "tier.npz"
    _write(path, {e.name: {e._key("a step"): np.array([0, 0, 1, 0], dtype=np.float32)}})
    monkeypatch.setattr(goldens, "_update", True)
    with known_vectors(path):
        e.embed(["a step", "a new insight"])
        stand_in.embed(["a stand-in's text"])
    got = _read(path)
    assert list(got) == [e.name]  # the stand-in's vectors are never written
    assert sorted(got[e.name]) == sorted([e._key("a step"), e._key("a new insight")])
    assert got[e.name][e._key("a new insight")].tolist() == [len("a new insight"), 1, 0, 0]
    assert m.texts == ["a new insight"] and counted.texts == ["a stand-in's text"]


def test_warm_home_seeds_a_home_other_processes_read_and_writes_back_what_they_added(tmp_path, monkeypatch):
    """The shared Prefect servers' homes (tests/integration/conftest.py): their CLI and flow-run processes read
    the seeded vectors from the home's cache file; what they embed beyond them is written back under the update
    flag (and only then; without it a warning counts them)."""
    from tests.seeded_vectors import warm_home

    home, path = tmp_path / "server-home", tmp_path / "server.npz"
    name = "st:warm-home-test"
    _write(path, {name: {E.CachedEmbedder._key("a step"): np.array([0, 0, 1, 0], dtype=np.float32)}})
    other = CountingModel(name)  # another process's model, behind the same cache file
    monkeypatch.setattr(goldens, "_update", False)
    with pytest.warns(UserWarning, match="embedded 1 text"), warm_home(home, path):
        cache = E.CachedEmbedder(other, path=home / E.CACHE_FILE)
        assert cache.embed(["a step"]).tolist() == [[0, 0, 1, 0]] and other.texts == []
        cache.embed(["a new insight"])
    assert len(_read(path)[name]) == 1  # not written without the flag
    monkeypatch.setattr(goldens, "_update", True)
    with warm_home(tmp_path / "another-home", path):
        E.CachedEmbedder(other, path=tmp_path / "another-home" / E.CACHE_FILE).embed(["a third text"])
    assert sorted(_read(path)[name]) == sorted(E.CachedEmbedder._key(t) for t in ("a step", "a third text"))
