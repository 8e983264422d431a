"""The embedding vectors a replayed run asks for, kept beside its recording (``vectors.npz``): a transcript's
folder, the ask evaluation's, the shipped InsightBench tasks'.

A replay embeds ~75 texts (its steps, the scan's leads, the candidates, the insights) with the bundled model:
about half of a replay's CPU (13 of ~30 s, bench/README.md, session 13, suite). The texts and so their vectors are
the same at every replay of a transcript, so the replay seeds the process's embedding cache with them first
(``$ASSAY_HOME/embeddings.sqlite``, the product's own cache, keyed by model and text): the run reads them back as a
warm host does, and the model embeds only a text the fixture lacks (a replay never fails for a missing vector; it
warns, naming the update flag). The vectors are the model's own, so the run is the one it would be without them.

``pytest --update-goldens`` (or ``ASSAY_UPDATE_GOLDEN=1``) adds to each file the texts its run asked for;
commit it with the recording.
"""

from __future__ import annotations

import contextlib
import warnings
from pathlib import Path

import numpy as np

from tests import goldens

FILE = "vectors.npz"
_ACTIVE: list[object] = []  # the known_vectors contexts open, innermost last


def _read(path: Path) -> dict[str, dict[str, np.ndarray]]:
    """{model name: {text key: vector}} of a fixture file."""
    out: dict[str, dict[str, np.ndarray]] = {}
    if not path.exists():
        return out
    with np.load(path, allow_pickle=False) as z:
        for i in range(int(z["models"].shape[0])):
            keys, vecs = z[f"keys{i}"], z[f"vecs{i}"]
            out[str(z["models"][i])] = {str(k): v for k, v in zip(keys, vecs)}
    return out


def _write(path: Path, vectors: dict[str, dict[str, np.ndarray]]) -> None:
    arrays: dict[str, np.ndarray] = {"models": np.array(sorted(vectors))}
    for i, model in enumerate(sorted(vectors)):
        keys = sorted(vectors[model])
        arrays[f"keys{i}"] = np.array(keys)
        arrays[f"vecs{i}"] = np.vstack([vectors[model][k] for k in keys]).astype(np.float32)
    np.savez_compressed(path, **arrays)


@contextlib.contextmanager
def seeded_vectors(folder: Path):
    """Seed the embedding cache with ``folder``'s vectors for the body (a replay), and record which texts the
    body asked for: rewritten under the update flag, warned about when the fixture lacks some."""
    from assay.vectors import embedder as E

    path = folder / FILE
    fixture = _read(path)
    for model, vecs in fixture.items():
        e = E._embedder(model)
        if isinstance(e, E.CachedEmbedder):
            e._put(vecs)
    asked: dict[str, set[str]] = {}
    real_get = E.CachedEmbedder._get

    def recording_get(self, keys):
        asked.setdefault(self.name, set()).update(keys)
        return real_get(self, keys)

    texts: dict[str, str] = {}
    real_key = E.CachedEmbedder._key

    def recording_key(text):
        k = texts[text] = real_key(text)
        return k

    E.CachedEmbedder._get = recording_get
    E.CachedEmbedder._key = staticmethod(recording_key)
    try:
        yield
    finally:  # a replay that fails on purpose (a mismatch) asked for its texts too
        E.CachedEmbedder._get = real_get
        E.CachedEmbedder._key = staticmethod(real_key)
        if goldens.updating():  # merged into what the file holds: the step index (most likely) embeds on a
            # background thread, so a run may ask for a step's text or not (CI warned of two of round 17's, the
            # update had missed)
            found = {model: {**fixture.get(model, {}), **real_get(E._embedder(model), sorted(keys))}
                     for model, keys in asked.items()}
            _write(path, {m: v for m, v in found.items() if v})
        else:
            lacking = sorted(k for model, keys in asked.items() for k in keys - fixture.get(model, {}).keys())
            if lacking:  # named (cut), so that a text that differs from run to run shows which it is
                by_key = {k: t for t, k in texts.items()}
                shown = "; ".join(repr(by_key.get(k, k)[:100]) for k in lacking[:3])
                warnings.warn(f"{folder.name}: {len(lacking)} embedded text(s) not in {FILE}: the model embedded "
                              f"them; refresh the file with --update-goldens ({shown})", stacklevel=3)


@contextlib.contextmanager
def known_vectors(path: Path):
    """For a test tier: the product's embedding models (sentence-transformers, the multilingual USE) answer the
    texts whose vectors ``path`` (a ``vectors.npz``) holds from it, and run for the rest. Everything around the
    model is the product's own: its embedding cache, what a later process reads back, the hit and miss counts.
    The unit tier embeds ~200 texts and loaded the model once per worker for them (~7 s of CPU each); with the
    file the model loads only for a text the file lacks (a warning counts them; no test fails for it).
    ``--update-goldens`` merges the vectors the models computed in this run into the file (each xdist worker
    under a lock); delete the file first to drop the texts no test asks for any more."""
    import fcntl
    import hashlib
    import tempfile

    from assay.vectors import embedder as E

    fixture = _read(path)
    computed: dict[str, dict[str, np.ndarray]] = {}
    me = object()  # only the innermost known_vectors answers (a test of it runs inside a tier's)
    models = (E.Embedder, E.USEEmbedder)  # the local models (a remote endpoint is always asked)
    real = {cls: (cls.__dict__["embed"], cls.__dict__["dim"]) for cls in models}

    def answering(cls):
        real_embed, real_dim = real[cls]

        def embed(self, texts, *args, **kwargs):
            if not texts or not _ACTIVE or _ACTIVE[-1] is not me:  # (a writer's thread may embed at teardown)
                return real_embed(self, texts, *args, **kwargs)
            known = fixture.get(self.name, {})
            keys = [E.CachedEmbedder._key(t) for t in texts]
            missing = list(dict.fromkeys(t for t, k in zip(texts, keys) if k not in known))
            new = {}
            if missing:
                new = {E.CachedEmbedder._key(t): v for t, v in zip(missing, real_embed(self, missing, *args, **kwargs))}
                computed.setdefault(self.name, {}).update(new)
            return np.vstack([known[k] if k in known else new[k] for k in keys]).astype(np.float32)

        def dim(self):
            known = fixture.get(self.name) if _ACTIVE and _ACTIVE[-1] is me else None
            if known:
                return int(next(iter(known.values())).shape[0])
            return real_dim.__get__(self) if hasattr(real_dim, "__get__") else real_dim

        return embed, property(dim)

    for cls in models:
        cls.embed, cls.dim = answering(cls)
    _ACTIVE.append(me)
    try:
        yield
    finally:
        _ACTIVE.remove(me)
        for cls in models:
            cls.embed, cls.dim = real[cls]
        fresh = {m: v for m, v in computed.items() if v}
        if fresh and goldens.updating():
            digest = hashlib.sha256(bytes(path)).hexdigest()[:16]
            with open(Path(tempfile.gettempdir()) / f"assay-vectors-{digest}.lock", "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)  # (the lock file stays: another worker may be waiting on it)
                merged = _read(path)
                for m, vecs in fresh.items():
                    merged.setdefault(m, {}).update(vecs)
                _write(path, merged)
        elif fresh:
            warnings.warn(f"{path}: the model embedded {sum(map(len, fresh.values()))} text(s) it lacks; "
                          f"refresh it with --update-goldens", stacklevel=3)


@contextlib.contextmanager
def warm_home(home: Path, path: Path):
    """A test's own ``ASSAY_HOME`` whose processes (the CLI, Prefect workers and their flow runs) embed texts: its
    embedding cache starts with the models' vectors of those texts (``path``, a ``vectors.npz``), as a host's
    that ran them before, so that no process loads the model for them (each load is ~8 s of CPU). A text the file
    lacks is embedded by the model and counted in a warning (the work-pool tests' loopback analyst numbers its
    answers per area, so the texts are the same at every run); ``--update-goldens`` writes the cache's vectors (the
    file's and the new ones) back to the file."""
    from assay.vectors import embedder as E

    fixture = _read(path)
    cache = home / E.CACHE_FILE
    home.mkdir(parents=True, exist_ok=True)
    for model, vecs in fixture.items():
        E.CachedEmbedder(E.make_embedder(model), path=cache)._put(vecs)
    yield
    import sqlite3

    if not cache.exists():
        return
    con = sqlite3.connect(str(cache))
    try:
        rows = con.execute("SELECT model, key, vec FROM vectors").fetchall()
    finally:
        con.close()
    held: dict[str, dict[str, np.ndarray]] = {}
    for model, key, vec in rows:
        held.setdefault(model, {})[key] = np.frombuffer(vec, dtype=np.float32)
    new = sum(1 for m, vecs in held.items() for k in vecs if k not in fixture.get(m, {}))
    if new and goldens.updating():
        _write(path, held)
    elif new:
        warnings.warn(f"{path}: a process of this home embedded {new} text(s) it lacks (each process that did loaded "
                      "the model); refresh it with --update-goldens", stacklevel=3)
