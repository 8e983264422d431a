"""Vector collections in this process's memory: the run step index's home when the index is Qdrant local mode.

Local mode admits one process per folder, so a run's areas run in the process that explored
(``assay.run.placement``), and a run's step collection is dropped when the run ends: nothing outside the
process ever reads it. Keeping it in memory is the same index without importing Qdrant's client (two
seconds of a one-area rerun, issue #20 item 8) and without taking the folder's lock for it. A process that
dies loses it as it lost its lock; the retry rebuilds it from the stored steps (``StepIndex.ensure``), their
vectors read back from the embedding cache. Same interface as ``VectorIndex``; brute-force cosine search (a
run has at most a few hundred steps).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass
class Hit:
    key: str
    score: float
    payload: dict[str, Any]


class MemoryIndex:
    local = True  # this process's own: the orphan sweep may drop what no run it knows owns

    def __init__(self) -> None:
        self._sets: dict[str, dict[str, tuple[np.ndarray, dict[str, Any]]]] = {}
        self._lock = threading.RLock()

    def ensure(self, name: str, dim: int) -> None:
        with self._lock:
            self._sets.setdefault(name, {})

    def exists(self, name: str) -> bool:
        with self._lock:
            return name in self._sets

    def upsert(self, name: str, items: list[tuple[str, list[float], dict[str, Any]]]) -> None:
        with self._lock:
            points = self._sets.setdefault(name, {})
            for key, vector, payload in items:
                v = np.asarray(vector, dtype=np.float32)
                n = float(np.linalg.norm(v))
                points[key] = (v / n if n else v, {**payload, "_key": key})

    def delete(self, name: str, keys: list[str]) -> None:
        with self._lock:
            for k in keys:
                self._sets.get(name, {}).pop(k, None)

    def search(self, name: str, vector: list[float], top_k: int, min_score: float | None = None) -> list[Hit]:
        with self._lock:
            points = list(self._sets.get(name, {}).items())
        if not points:
            return []
        q = np.asarray(vector, dtype=np.float32)
        n = float(np.linalg.norm(q))
        scores = np.stack([v for _, (v, _) in points]) @ (q / n if n else q)
        order = np.argsort(-scores, kind="stable")[: max(1, top_k)]
        hits = [Hit(key=points[i][0], score=float(scores[i]), payload=points[i][1][1]) for i in order]
        return [h for h in hits if min_score is None or h.score >= min_score]

    def vectors(self, name: str, keys: list[str]) -> dict[str, tuple[list[float], dict[str, Any]]]:
        with self._lock:
            points = self._sets.get(name, {})
            return {k: (points[k][0].tolist(), points[k][1]) for k in keys if k in points}

    def payloads(self, name: str) -> dict[str, dict[str, Any]]:
        with self._lock:
            return {k: p for k, (_, p) in self._sets.get(name, {}).items()}

    def count(self, name: str) -> int:
        with self._lock:
            return len(self._sets.get(name, {}))

    def drop(self, name: str) -> bool:
        with self._lock:
            return self._sets.pop(name, None) is not None

    def collections(self, prefix: str = "") -> list[str]:
        with self._lock:
            return sorted(n for n in self._sets if n.startswith(prefix))

    def close(self) -> None:
        pass


_PROCESS = MemoryIndex()


def process_index() -> MemoryIndex:
    """The process-wide one (a run's exploration and its area subflows share it)."""
    return _PROCESS
