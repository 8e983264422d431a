"""The per-run step index: one vector per completed step (purpose + SQL, not thinking)."""

from __future__ import annotations

from ..models import ExplorationStep
from ..vectors.embedder import Embedder
from ..vectors.index import RUN_PREFIX, VectorIndex, run_collection


def step_text(step: ExplorationStep) -> str:
    return f"{step.purpose}\n[SQL]: {step.query}"


def step_payload(step: ExplorationStep) -> dict:
    return {"step": step.step, "purpose": step.purpose[:300], "row_count": step.row_count,
            "has_error": bool(step.error or step.refused)}


class StepIndex:
    def __init__(self, index: VectorIndex, embedder: Embedder, run_id: str):
        self.index = index
        self.embedder = embedder
        self.run_id = run_id
        self.collection = run_collection(run_id)

    def upsert(self, steps: list[ExplorationStep]) -> int:
        steps = [s for s in steps if s.action.value == "query"]
        if not steps:
            return 0
        self.index.ensure(self.collection, self.embedder.dim)
        vecs = self.embedder.embed([step_text(s) for s in steps])
        self.index.upsert(self.collection, [
            (f"step-{s.step}", v.tolist(), step_payload(s)) for s, v in zip(steps, vecs)
        ])
        return len(steps)

    def ensure(self, steps: list[ExplorationStep]) -> int:
        """Rebuild from persisted steps when the collection is missing or incomplete."""
        want = [s for s in steps if s.action.value == "query"]
        if self.index.count(self.collection) >= len(want) and self.index.exists(self.collection):
            return 0
        return self.upsert(want)

    def search(self, text: str, top_k: int) -> list[tuple[int, float]]:
        if not self.index.exists(self.collection):
            return []
        v = self.embedder.embed_one(text)
        hits = self.index.search(self.collection, v.tolist(), top_k=max(1, top_k))
        return [(int(h.payload["step"]), h.score) for h in hits if not h.payload.get("has_error")]

    def drop(self) -> bool:
        return self.index.drop(self.collection)


def sweep_orphans(index: VectorIndex, active_run_ids: set[str], finished_before: dict[str, float],
                  now: float, max_age_s: float, known: set[str] | None = None) -> list[str]:
    """Drop run collections whose run is not active and ended more than ``max_age_s`` ago.

    ``finished_before`` maps a collection name to its run's end time (epoch s). With
    ``known`` given, only those collections may be dropped; without it (a private, local
    index) a collection with no known run is an orphan of a killed process.
    """
    active = {run_collection(r) for r in active_run_ids}
    dropped = []
    for name in index.collections(RUN_PREFIX):
        if name in active:
            continue
        ended = finished_before.get(name)
        if ended is not None and now - ended < max_age_s:
            continue
        if known is not None and name not in known:
            continue  # a shared server may hold other installations' runs: leave what we don't know
        if index.drop(name):
            dropped.append(name)
    return dropped
