"""The embedding vectors a replayed run asks for, kept beside its recording (``vectors.npz``): a transcript's
folder, the ask evaluation's, the shipped InsightBench tasks'.

A replay embeds ~75 texts (its steps, the scan's leads, the candidates, the insights) with the bundled model:
about half of a replay's CPU (13 of ~30 s, bench/README.md, session 13, suite). The texts and so their vectors are
the same at every replay of a transcript, so the replay seeds the process's embedding cache with them first
(``$ASSAY_HOME/embeddings.sqlite``, the product's own cache, keyed by model and text): the run reads them back as a
warm host does, and the model embeds only a text the fixture lacks (a replay never fails for a missing vector; it
warns, naming the update flag). The vectors are the model's own, so the run is the one it would be without them.

``pytest --update-goldens`` (or ``ASSAY_UPDATE_GOLDEN=1``) rewrites each file from the texts its run asked for;
commit it with the recording.
"""

from __future__ import annotations

import contextlib
import warnings
from pathlib import Path

import numpy as np

from tests import goldens

FILE = "vectors.npz"


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

    E.CachedEmbedder._get = recording_get
    try:
        yield
    finally:  # a replay that fails on purpose (a mismatch) asked for its texts too
        E.CachedEmbedder._get = real_get
        if goldens.updating():
            found = {model: real_get(E._embedder(model), sorted(keys)) for model, keys in asked.items()}
            _write(path, {m: v for m, v in found.items() if v})
        else:
            lacking = sum(len(keys - fixture.get(model, {}).keys()) for model, keys in asked.items())
            if lacking:
                warnings.warn(f"{folder.name}: {lacking} embedded text(s) not in {FILE}: the model embedded them; "
                              f"refresh the file with --update-goldens", stacklevel=3)
