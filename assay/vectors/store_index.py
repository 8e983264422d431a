"""A vector index kept in the result store: every process that reaches the store shares it.

Qdrant local mode (the embedded default) admits one process per folder, and no Qdrant server can be assumed
on a team's machines. Here each point (key, float32 vector, payload) is a document of the store
(``vector_points``), and each collection a document (``vector_sets``) carrying a version token that every
write changes. A process searches an in-memory matrix of the collection that it rebuilds only when the
token moved: one small read per search while nothing changes. With MongoDB as the store, the workers of a
pool on any host share the run's steps and the project's schema index; with the embedded store
(SQLite under ``$ASSAY_HOME``), the processes of one host do.

Same interface as ``VectorIndex`` (``assay.vectors.index``), so the step and schema indexes, the flow hook
that drops a run's collection and the orphan sweep use it unchanged. Brute-force cosine search: a run has
at most a few hundred steps and a project a few thousand tables (``bench/scale_out.py --index`` measures).
"""

from __future__ import annotations

import base64
import threading
import uuid
from dataclasses import dataclass
from typing import Any

import numpy as np

POINTS, SETS = "vector_points", "vector_sets"


@dataclass
class Hit:
    key: str
    score: float
    payload: dict[str, Any]


def _pack(vector) -> str:
    return base64.b64encode(np.asarray(vector, dtype=np.float32).tobytes()).decode("ascii")


def _unpack(text: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text), dtype=np.float32)


def _point_id(name: str, key: str) -> str:
    return f"{name}/{key}"


@dataclass
class _Loaded:
    version: str
    keys: list[str]
    matrix: np.ndarray  # rows normalised: a dot product is the cosine
    raw: dict[str, np.ndarray]
    payloads: dict[str, dict[str, Any]]


class StoreIndex:
    """Vector collections as store documents, searched in memory."""

    # this installation's own: the orphan sweep may drop a run collection that no run of the store knows
    local = True

    def __init__(self, db: Any, *, backend: str = "tinymongo"):
        self.points = db[POINTS]
        self.sets = db[SETS]
        self.backend = backend
        self.points.create_index("collection")
        self._cache: dict[str, _Loaded] = {}
        self._lock = threading.RLock()

    # ------------------------------------------------------------------ writes

    def _touch(self, name: str, dim: int | None = None) -> None:
        fields: dict[str, Any] = {"version": uuid.uuid4().hex}
        if dim is not None:
            fields["dim"] = int(dim)
        self.sets.update_one({"_id": name}, {"$set": fields}, upsert=True)

    def ensure(self, name: str, dim: int) -> None:
        if self.sets.find_one({"_id": name}) is None:
            self._touch(name, dim)

    def upsert(self, name: str, items: list[tuple[str, list[float], dict[str, Any]]]) -> None:
        if not items:
            return
        self._write(name, [{"_id": _point_id(name, k), "collection": name, "key": k, "vector": _pack(v),
                            "payload": dict(p)} for k, v, p in items])
        self._touch(name, len(items[0][1]))

    def _write(self, name: str, docs: list[dict]) -> None:
        if self.backend == "mongodb":
            from pymongo import ReplaceOne

            self.points.bulk_write([ReplaceOne({"_id": d["_id"]}, d, upsert=True) for d in docs], ordered=False)
        else:
            # tinymongo: replace_one and insert_one re-read the collection per write (O(n) each); one delete and
            # one insert_many (SQLite enforces the ids) keep a schema of thousands of tables a matter of seconds
            self.points.delete_many({"_id": {"$in": [d["_id"] for d in docs]}})
            self.points.insert_many(docs)

    def delete(self, name: str, keys: list[str]) -> None:
        if not keys:
            return
        self.points.delete_many({"_id": {"$in": [_point_id(name, k) for k in keys]}})
        self._touch(name)

    def set_payloads(self, name: str, updates: dict[str, dict[str, Any]]) -> None:
        """Merge new payload fields into existing points, by key, without touching their vectors."""
        if not updates:
            return
        got = self._load(name)
        if got is None:
            return
        docs = []
        for k, p in updates.items():
            if k in got.raw:
                payload = {x: v for x, v in got.payloads[k].items() if x != "_key"}
                docs.append({"_id": _point_id(name, k), "collection": name, "key": k, "vector": _pack(got.raw[k]),
                             "payload": {**payload, **p}})
        if docs:
            self._write(name, docs)
        self._touch(name)

    def drop(self, name: str) -> bool:
        existed = self.sets.find_one({"_id": name}) is not None
        self.points.delete_many({"collection": name})
        self.sets.delete_one({"_id": name})
        with self._lock:
            self._cache.pop(name, None)
        return existed

    # ------------------------------------------------------------------ reads

    def _load(self, name: str) -> _Loaded | None:
        """The collection in memory, rebuilt when another process (or this one) changed it."""
        head = self.sets.find_one({"_id": name})
        if head is None:
            with self._lock:
                self._cache.pop(name, None)
            return None
        with self._lock:
            got = self._cache.get(name)
            if got is not None and got.version == head["version"]:
                return got
        keys, raw, payloads = [], {}, {}
        for d in self.points.find({"collection": name}):
            k = d["key"]
            keys.append(k)
            raw[k] = _unpack(d["vector"])
            payloads[k] = {**(d.get("payload") or {}), "_key": k}
        dim = int(head.get("dim") or (len(next(iter(raw.values()))) if raw else 0))
        matrix = np.stack([raw[k] for k in keys]) if keys else np.zeros((0, dim), dtype=np.float32)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True) if keys else np.ones((0, 1), dtype=np.float32)
        matrix = matrix / np.where(norms == 0, 1.0, norms)
        got = _Loaded(head["version"], keys, matrix, raw, payloads)
        with self._lock:
            self._cache[name] = got
        return got

    def exists(self, name: str) -> bool:
        return self.sets.find_one({"_id": name}) is not None

    def search(self, name: str, vector: list[float], top_k: int, min_score: float | None = None) -> list[Hit]:
        got = self._load(name)
        if got is None or not got.keys:
            return []
        q = np.asarray(vector, dtype=np.float32)
        n = float(np.linalg.norm(q))
        scores = got.matrix @ (q / n if n else q)
        order = np.argsort(-scores, kind="stable")[:max(1, int(top_k))]
        return [Hit(key=got.keys[i], score=float(scores[i]), payload=dict(got.payloads[got.keys[i]]))
                for i in order if min_score is None or scores[i] >= min_score]

    def vectors(self, name: str, keys: list[str]) -> dict[str, tuple[list[float], dict[str, Any]]]:
        got = self._load(name) if keys else None
        if got is None:
            return {}
        return {k: (got.raw[k].tolist(), dict(got.payloads[k])) for k in keys if k in got.raw}

    def payloads(self, name: str) -> dict[str, dict[str, Any]]:
        got = self._load(name)
        return {} if got is None else {k: dict(p) for k, p in got.payloads.items()}

    def count(self, name: str) -> int:
        got = self._load(name)
        return 0 if got is None else len(got.keys)

    def collections(self, prefix: str = "") -> list[str]:
        return sorted(d["_id"] for d in self.sets.find({}, {"_id": 1}) if str(d["_id"]).startswith(prefix))

    def close(self) -> None:
        with self._lock:
            self._cache.clear()
