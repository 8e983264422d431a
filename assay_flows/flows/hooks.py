"""Flow hooks: drop the run's step collection however the flow ends."""

from __future__ import annotations

import logging

from assay.settings import load_settings
from assay.vectors.index import run_collection, step_vectors

log = logging.getLogger("assay")


def run_id_of(flow_run) -> str | None:
    params = getattr(flow_run, "parameters", None) or {}
    return params.get("run_id") or (str(flow_run.id).replace("-", "") if getattr(flow_run, "id", None) else None)


def drop_run_collection_of(run_id: str) -> None:
    try:
        step_vectors(load_settings()).drop(run_collection(run_id))  # local mode: this process's memory
    except Exception as exc:  # a hook must never turn a result into a crash
        log.warning("could not drop the step collection of run %s: %s", run_id, exc)


def drop_run_collection(flow, flow_run, state) -> None:
    run_id = run_id_of(flow_run)
    if run_id:
        drop_run_collection_of(run_id)


def mark_run_crashed(flow, flow_run, state) -> None:
    """A crash or cancellation still leaves a run document that says so, and why."""
    from assay.models import RunStatus, utcnow
    from assay.store import open_store

    run_id = run_id_of(flow_run)
    if run_id:
        status = RunStatus.cancelled if state.is_cancelled() else RunStatus.crashed
        try:
            open_store(load_settings()).update_run(
                run_id, status=status, finished_at=utcnow(),
                error=f"flow run {state.name.lower()}: {state.message or ''}".strip().rstrip(":"))
        except Exception as exc:
            log.warning("could not mark run %s: %s", run_id, exc)
        if state.is_crashed():
            notify_crash_of(run_id, f"flow run crashed: {state.message or ''}".strip())
    drop_run_collection(flow, flow_run, state)


def notify_crash_of(run_id: str, why: str) -> None:
    """A crash saved no result: post that it crashed (a failed post is logged, never raised)."""
    from assay.notify import notify_crash
    from assay.store import open_store

    try:
        store = open_store(load_settings())
        if store.has_result(run_id):  # it got as far as saving: the usual summary says more
            notify_run_id(run_id)
            return
        problem = notify_crash(store.get_project(store.get_run(run_id).project_id), run_id, why)
        if problem:
            log.warning("notification of run %s: %s", run_id, problem)
    except Exception as exc:
        log.warning("notification of run %s failed: %s", run_id, exc)


def notify_run_end(flow, flow_run, state) -> None:
    """Post the run's summary to the project's webhook (a failed post is logged, never raised)."""
    run_id = run_id_of(flow_run)
    if run_id:
        notify_run_id(run_id)


def notify_run_id(run_id: str) -> None:
    from assay.notify import notify_run
    from assay.store import open_store

    try:
        store = open_store(load_settings())
        if not store.has_result(run_id):
            return
        result = store.get_result(run_id)
        problem = notify_run(store.get_project(result.project_id), result)
        if problem:
            log.warning("notification of run %s: %s", run_id, problem)
    except Exception as exc:
        log.warning("notification of run %s failed: %s", run_id, exc)


END_HOOKS = dict(
    on_completion=[drop_run_collection, notify_run_end],
    on_failure=[drop_run_collection, notify_run_end],
    on_cancellation=[mark_run_crashed],
    on_crashed=[mark_run_crashed],
)
