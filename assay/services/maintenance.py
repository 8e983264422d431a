"""Maintenance: sweep orphaned step collections and delete old runs with everything they wrote."""

from __future__ import annotations

import datetime as dt
import time

from .. import limits
from ..liveness import reap_gone_runs
from ..models import as_utc, utcnow
from ..store import Store


def sweep_run_collections(store: Store, index, *, now: float | None = None,
                          max_age_s: float = limits.ORPHAN_COLLECTION_AGE_S) -> list[str]:
    """Drop step collections of runs that are no longer active and ended more than a day ago
    (or whose run is unknown: a process killed before its hooks ran)."""
    from ..analysis.step_index import sweep_orphans
    from ..vectors.index import run_collection

    now = now if now is not None else time.time()
    reap_gone_runs(store)
    crashed = {run_collection(r) for r in store.crashed_run_ids()}  # no hook dropped theirs: nothing to wait for
    ended = {run_collection(run_id): as_utc(dt.datetime.fromisoformat(fin)).timestamp()
             for run_id, fin in store.finished_runs().items()}
    active = store.active_run_ids()
    recent = {name for name, t in ended.items() if now - t < max_age_s and name not in crashed}
    # a run that ended recently keeps its collection for a day (a rerun may still want it)
    known = None if getattr(index, "local", True) else set(ended)
    return sweep_orphans(index, active, {n: ended[n] for n in recent}, now, max_age_s, known=known)


class BackgroundSweep:
    """``sweep_run_collections`` on a thread of its own, started with a run: opening the vector index (the
    Qdrant client's import, a local folder's collections) and dropping orphans stays off the path to the
    run's first step (issue #20 item 8). ``join()`` before the run ends: its collections are dropped by the
    end hooks, and the process's index is closed at exit. A failure is kept (``error``) and logged by
    ``join``: maintenance never fails a discovery."""

    def __init__(self, store: Store, settings, name: str = "assay-boot-sweep"):
        import contextvars
        import threading

        self.dropped: list[str] = []
        self.error: BaseException | None = None
        ctx = contextvars.copy_context()

        def run() -> None:
            from ..vectors.index import DeferredIndex, open_index, step_vectors

            try:
                self.dropped = sweep_run_collections(store, open_index(settings))
                held = step_vectors(settings)
                if not isinstance(held, DeferredIndex):  # local mode: runs' steps in this process's memory
                    self.dropped += sweep_run_collections(store, held)
            except BaseException as exc:  # noqa: BLE001 - reported by join()
                self.error = exc

        self._thread = threading.Thread(target=ctx.run, args=(run,), name=name, daemon=True)
        self._thread.start()

    def join(self, timeout: float | None = None, log=None) -> list[str]:
        """Wait for the sweep; the collections it dropped. ``log``: where to say what it did or why it failed."""
        self._thread.join(timeout)
        if log is not None:
            if self.error is not None:
                log.warning("orphan sweep failed: %s", self.error)
            elif self.dropped:
                log.info("dropped %d orphaned step collections", len(self.dropped))
        return self.dropped


def prune_runs(store: Store, *, keep_days: float = limits.KEEP_RUNS_DAYS, keep_last: int = limits.KEEP_LAST_RUNS,
               now: dt.datetime | None = None) -> list[str]:
    """Delete runs that ended more than ``keep_days`` ago, with everything they wrote; the last
    ``keep_last`` finished runs of every project are kept whatever their age (their insights are the
    memory the next discovery compares with)."""
    now = now or utcnow()
    cutoff = now - dt.timedelta(days=keep_days)
    by_project: dict[str, list[tuple[dt.datetime, str]]] = {}
    for run_id, fin in store.finished_runs().items():
        run = store.get_run(run_id)
        by_project.setdefault(run.project_id, []).append((as_utc(dt.datetime.fromisoformat(fin)), run_id))
    deleted = []
    for runs in by_project.values():
        runs.sort(reverse=True)
        for ended, run_id in runs[keep_last:]:
            if ended < cutoff:
                store.delete_run(run_id)
                deleted.append(run_id)
    return deleted
