"""A single background worker: work that must not sit on the exploration loop's critical path."""

from __future__ import annotations

import contextvars
import logging
import queue
import threading
from typing import Callable, Generic, TypeVar

log = logging.getLogger("assay")
T = TypeVar("T")


class BatchWorker(Generic[T]):
    """Collects items and hands them to ``handle`` in batches, on one daemon thread.

    ``close()`` waits until every item was handled. A failing batch is logged, never
    raised into the producer: background work is an optimisation whose results are
    rebuilt on demand (the step index) or are only a view (artifacts).
    """

    def __init__(self, handle: Callable[[list[T]], None], name: str, max_batch: int = 32,
                 first: Callable[[], object] | None = None):
        """``first``: work done on the thread before any item (in order: items wait for it), failures logged."""
        self.handle = handle
        self.first = first
        self.max_batch = max_batch
        self.q: queue.Queue = queue.Queue()
        self.errors: list[BaseException] = []
        # the worker sees the caller's context (Prefect's run context: artifacts link to the task run)
        ctx = contextvars.copy_context()
        self._thread = threading.Thread(target=ctx.run, args=(self._run,), name=name, daemon=True)
        self._thread.start()

    def put(self, item: T) -> None:
        self.q.put(item)

    def _run(self) -> None:
        if self.first is not None:
            try:
                self.first()
            except BaseException as exc:  # noqa: BLE001 - reported, never raised into the loop
                self.errors.append(exc)
                log.warning("background %s failed: %s", self._thread.name, exc)
        done = False
        while not done:
            batch = [self.q.get()]
            while len(batch) < self.max_batch:
                try:
                    batch.append(self.q.get_nowait())
                except queue.Empty:
                    break
            stop = [b for b in batch if b is _STOP]
            batch = [b for b in batch if b is not _STOP]
            if batch:
                try:
                    self.handle(batch)
                except BaseException as exc:  # noqa: BLE001 - reported, never raised into the loop
                    self.errors.append(exc)
                    log.warning("background %s failed: %s", self._thread.name, exc)
            done = bool(stop)

    def close(self, timeout: float | None = None) -> None:
        self.q.put(_STOP)
        self._thread.join(timeout)


_STOP = object()
