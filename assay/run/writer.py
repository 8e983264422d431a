"""The run's writer: where the exploration's steps go."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Callable

from ..background import BatchWorker
from ..models import ExplorationStep

if TYPE_CHECKING:
    from .session import RunSession


class RunWriter:
    """The sink of exploration steps.

    The step itself is written synchronously, once (crash-safe resume depends on it). The run
    document's progress and telemetry are coalesced by a background writer, and steps are
    indexed in batches off the loop's critical path.
    """

    def __init__(self, s: RunSession, on_step: Callable[[ExplorationStep], None] | None,
                 prior: list[ExplorationStep] | None = None):
        """``prior``: the steps a resumed exploration already stored; the indexer first makes sure they are
        indexed (``StepIndex.ensure``), on its own thread: opening the index (importing Qdrant's client,
        opening its folder) is off the path to the first step, and ``close()`` waits for it all."""
        self.s = s
        self.on_step = on_step
        self.pending: dict[str, int] = {}
        self._lock = threading.Lock()
        steps = list(prior or [])
        self.indexer = BatchWorker(self._index, name=f"step-index-{s.run_id[:8]}",
                                   first=lambda: s.step_index.ensure(steps))
        self.progress = BatchWorker(self._progress, name=f"run-progress-{s.run_id[:8]}", max_batch=256)

    def bump(self, counters: dict[str, int]) -> None:
        with self._lock:
            for k, v in counters.items():
                if v:
                    self.pending[k] = self.pending.get(k, 0) + v

    def _index(self, steps: list[ExplorationStep]) -> None:
        self.bump({"analysis_step_index_upserts": self.s.step_index.upsert(steps)})

    def _progress(self, steps: list[int]) -> None:
        with self._lock:
            counters, self.pending = self.pending, {}
        self.s.store.record_step(self.s.run_id, max(steps), counters)

    def __call__(self, step: ExplorationStep) -> None:
        self.s.store.add_step(step)  # written once, immediately: crash-safe resume
        self.progress.put(step.step)
        if step.action.value == "query":  # every completed query, failed ones flagged (has_error)
            self.indexer.put(step)
        if self.on_step is not None:
            self.on_step(step)

    def close(self) -> None:
        self.indexer.close()
        self.progress.close()
        with self._lock:
            counters, self.pending = self.pending, {}
        if counters:
            self.s.bump(counters)
