"""Qdrant collections: the project's schema index and each run's step index.

Local mode (a folder, one process) is the embedded default; ``QDRANT_URL``
points at a server. The Qdrant client is imported when an index is first opened, not with this module
(the import alone costs one to three seconds), and a run's session opens its index on first use
(``deferred_index``), off the path to its first exploration step (issue #20 item 8). Local mode is not thread-safe, so every call through a
local client is serialised by one lock; a server client needs none. Without a
server, ``ASSAY_VECTOR_INDEX=store`` (the default with ``MONGODB_URI``) keeps the
vectors in the result store, which every process shares (``store_index.py``).
"""

from __future__ import annotations

import atexit
import contextlib
import threading
import time
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterator

from ..settings import Settings

if TYPE_CHECKING:
    from qdrant_client import QdrantClient

_NS = uuid.UUID("6f1f5b8e-4f8a-4c3c-9a53-1f7a1d2c0b11")


def point_id(key: str) -> str:
    return str(uuid.uuid5(_NS, key))


@dataclass
class Hit:
    key: str
    score: float
    payload: dict[str, Any]


class VectorIndex:
    def __init__(self, client: QdrantClient, *, local: bool):
        self.client = client
        self.local = local
        self._lock = threading.RLock() if local else None
        self._tuned: dict[str, Any] = {}  # collection -> the storage connection already tuned

    def _fast_commits(self, name: str) -> None:
        """Local mode commits its SQLite file once per point, each commit an fsync: 2,000 table vectors took
        50 s of a 128 s schema build on this machine's disk. Write-ahead logging with ``synchronous=NORMAL``
        commits without an fsync and still never corrupts the file; a crash may lose the last writes, which
        the next sync re-embeds (a point without its hash is a changed table). No-op for a server client,
        or if the client's internals differ from the ones known here (then commits stay as they were)."""
        if not self.local:
            return
        try:
            conn = self.client._client.collections[name].storage.storage
        except (AttributeError, KeyError, TypeError):
            return
        if self._tuned.get(name) is conn:
            return
        with contextlib.suppress(Exception):
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            self._tuned[name] = conn

    @contextlib.contextmanager
    def _guard(self) -> Iterator[None]:
        if self._lock is None:
            yield
        else:
            with self._lock:
                yield

    def ensure(self, name: str, dim: int) -> None:
        from qdrant_client import models

        with self._guard():
            if not self.client.collection_exists(name):
                try:
                    self.client.create_collection(
                        name, vectors_config=models.VectorParams(size=dim, distance=models.Distance.COSINE)
                    )
                except Exception:
                    # a concurrent creator won the race; that is fine
                    if not self.client.collection_exists(name):
                        raise

    def exists(self, name: str) -> bool:
        with self._guard():
            return self.client.collection_exists(name)

    def upsert(self, name: str, items: list[tuple[str, list[float], dict[str, Any]]]) -> None:
        if not items:
            return
        from qdrant_client import models

        points = [
            models.PointStruct(id=point_id(k), vector=list(map(float, v)), payload={**p, "_key": k})
            for k, v, p in items
        ]
        with self._guard():
            self._fast_commits(name)
            self.client.upsert(name, points=points, wait=True)

    def delete(self, name: str, keys: list[str]) -> None:
        if not keys:
            return
        from qdrant_client import models

        with self._guard():
            self._fast_commits(name)
            self.client.delete(name, points_selector=models.PointIdsList(points=[point_id(k) for k in keys]))

    def search(self, name: str, vector: list[float], top_k: int, min_score: float | None = None) -> list[Hit]:
        with self._guard():
            res = self.client.query_points(
                name, query=list(map(float, vector)), limit=top_k, with_payload=True,
                score_threshold=min_score,
            )
        return [Hit(key=p.payload.get("_key", str(p.id)), score=float(p.score), payload=p.payload) for p in res.points]

    def vectors(self, name: str, keys: list[str]) -> dict[str, tuple[list[float], dict[str, Any]]]:
        """The stored vector and payload of each point named (missing ones are left out)."""
        if not keys:
            return {}
        with self._guard():
            pts = self.client.retrieve(name, ids=[point_id(k) for k in keys], with_payload=True, with_vectors=True)
        return {p.payload.get("_key", str(p.id)): (list(p.vector), p.payload) for p in pts if p.vector is not None}

    def payloads(self, name: str) -> dict[str, dict[str, Any]]:
        """Every point's payload by key (used for incremental re-indexing)."""
        out: dict[str, dict[str, Any]] = {}
        offset = None
        with self._guard():
            if not self.client.collection_exists(name):
                return out
            while True:
                pts, offset = self.client.scroll(name, limit=1000, offset=offset, with_payload=True,
                                                 with_vectors=False)
                for p in pts:
                    out[p.payload.get("_key", str(p.id))] = p.payload
                if offset is None:
                    return out

    def set_payloads(self, name: str, updates: dict[str, dict[str, Any]]) -> None:
        """Merge new payload fields into existing points, by key, without touching their vectors."""
        if not updates:
            return
        from qdrant_client import models

        ops = [models.SetPayloadOperation(set_payload=models.SetPayload(payload=p, points=[point_id(k)]))
               for k, p in updates.items()]
        with self._guard():
            self._fast_commits(name)
            for i in range(0, len(ops), 500):
                self.client.batch_update_points(name, update_operations=ops[i:i + 500], wait=True)

    def count(self, name: str) -> int:
        with self._guard():
            if not self.client.collection_exists(name):
                return 0
            return self.client.count(name, exact=True).count

    def drop(self, name: str) -> bool:
        with self._guard():
            if self.client.collection_exists(name):
                self.client.delete_collection(name)
                return True
            return False

    def collections(self, prefix: str = "") -> list[str]:
        with self._guard():
            return sorted(c.name for c in self.client.get_collections().collections if c.name.startswith(prefix))

    def close(self) -> None:
        with self._guard():
            with contextlib.suppress(Exception):
                self.client.close()


_INDEXES: dict[str, VectorIndex] = {}
_LOCK = threading.Lock()


@atexit.register
def _close_all() -> None:
    """Close clients before the interpreter tears modules down (local mode flushes on close)."""
    for idx in list(_INDEXES.values()):
        idx.close()
    _INDEXES.clear()


LOCAL_WAIT_S = 1800.0    # how long a run waits for another process to release the local index folder
LOCAL_WAIT_LOG_S = 30.0  # how often it says so


def _open_local(settings: Settings, *, wait_s: float | None = None, log_every_s: float = LOCAL_WAIT_LOG_S):
    """A local-mode client of the folder, waiting (and saying so) while another process holds it.

    Local mode admits one process per folder: a second run on the same machine (two runs on a process work
    pool, `assay discover` beside `assay serve`) waits for the first to finish instead of failing."""
    import logging
    import os

    from qdrant_client import QdrantClient

    log = logging.getLogger("assay")
    wait_s = float(os.environ.get("ASSAY_LOCAL_INDEX_WAIT_S", LOCAL_WAIT_S)) if wait_s is None else wait_s
    start = time.monotonic()
    next_say = start
    while True:
        try:
            return QdrantClient(path=str(settings.qdrant_path))
        except Exception as exc:  # portalocker: the folder is in use by another process
            waited = time.monotonic() - start
            if waited >= wait_s:
                from ..errors import ConfigError

                raise ConfigError(
                    f"the local vector store {settings.qdrant_path} stayed in use by another assay process for "
                    f"{waited:.0f}s ({exc}); set QDRANT_URL to share a Qdrant server between runs") from None
            if time.monotonic() >= next_say:
                log.warning("waiting for the local vector store %s: another assay process is using it "
                            "(%.0fs so far; set QDRANT_URL to share a Qdrant server instead)",
                            settings.qdrant_path, waited,
                            extra={"progress": f"waiting for the local vector store, in use by another assay "
                                               f"process ({waited:.0f}s)", "progress_for_s": log_every_s + 5})
                next_say = time.monotonic() + log_every_s
            time.sleep(0.5)


def index_key(settings: Settings) -> tuple[str, str]:
    """(kind, where) of the index these settings open (``assay.settings.vector_index_kind``)."""
    from ..settings import vector_index_kind

    kind = vector_index_kind(settings)
    where = {"server": settings.qdrant_url, "store": settings.mongodb_uri or str(settings.store_path),
             "local": str(settings.qdrant_path)}[kind]
    return kind, where


def open_index(settings: Settings) -> VectorIndex:
    """The process-wide index (local folders admit one client per process)."""
    kind, where = index_key(settings)
    key = f"{kind}:{where}"
    with _LOCK:
        idx = _INDEXES.get(key)
        if idx is not None:
            return idx
        if kind == "store":
            from ..store import open_store
            from .store_index import StoreIndex

            store = open_store(settings)
            idx = StoreIndex(store.db, backend=store.backend)
        elif kind == "server":
            from qdrant_client import QdrantClient

            client = QdrantClient(url=settings.qdrant_url, api_key=settings.qdrant_api_key, timeout=30)
            idx = VectorIndex(client, local=False)
        else:
            settings.qdrant_path.mkdir(parents=True, exist_ok=True)
            client = _open_local(settings)
            idx = VectorIndex(client, local=True)
        _INDEXES[key] = idx
        return idx


def close_index(settings: Settings) -> None:
    """Close and forget the process-wide index of these settings (a temporary one, whose folder goes next)."""
    kind, where = index_key(settings)
    with _LOCK:
        idx = _INDEXES.pop(f"{kind}:{where}", None)
    if idx is not None:
        idx.close()


class DeferredIndex:
    """The process's index (``open_index``) opened on its first use, not when it is handed out.

    A run's session builds its step and schema indexes around one of these: building them imports no Qdrant
    client and opens no collection folder, so that work happens in the threads that first read or write
    vectors (the schema index's sync, the step indexer, the boot-time sweep), not on the path to the first
    exploration step (issue #20 item 8). Every attribute is the opened index's."""

    def __init__(self, settings: Settings):
        self._settings = settings
        self._index: Any = None

    def resolve(self):
        """The opened index (opening it now if nothing has yet); ``open_index`` serialises the openers."""
        if self._index is None:
            self._index = open_index(self._settings)
        return self._index

    @property
    def opened(self) -> bool:
        return self._index is not None

    def __getattr__(self, name: str):
        if name.startswith("__") or name in ("_settings", "_index"):
            raise AttributeError(name)
        return getattr(self.resolve(), name)


def deferred_index(settings: Settings) -> DeferredIndex:
    return DeferredIndex(settings)


def step_vectors(settings: Settings):
    """Where a run's step vectors live: with Qdrant local mode, this process's memory (``memory_index``: the
    run's areas run in this process, and the collection is dropped when the run ends); with a server or the
    store, the index every worker shares, opened on first use."""
    from ..settings import vector_index_kind

    if vector_index_kind(settings) == "local":
        from .memory_index import process_index

        return process_index()
    return deferred_index(settings)


def schema_collection(project_id: str) -> str:
    return f"assay_schema_{project_id}"


RUN_PREFIX = "assay_run_"


def run_collection(run_id: str) -> str:
    return f"{RUN_PREFIX}{run_id.replace('-', '')}"
