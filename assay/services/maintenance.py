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
