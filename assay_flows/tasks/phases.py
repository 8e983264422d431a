"""One Prefect task per phase. Each takes ids, not data, and calls the core."""

from __future__ import annotations

import logging
import time
import traceback

from prefect import get_run_logger, task
from prefect.artifacts import acreate_progress_artifact, aupdate_progress_artifact, update_progress_artifact
from prefect.cache_policies import NO_CACHE

from assay.background import BatchWorker
from assay.models import AreaLog, ExplorationStep
from assay.report.text import without_controls
from assay.run.phases import (
    area_phase,
    context_phase,
    exploration_phase,
    init_phase,
    recommendations_phase,
    save_phase,
    schema_phase,
)
from assay.run.session import RunSession
from assay.services.estimate import estimate_project

from .artifacts import artifact_key, exploration_artifact
from .common import in_thread, retry_transient, run_scoped
from .storage import result_storage
from .warehouse_limit import phase_slots

log = logging.getLogger("assay")

PROGRESS_EVERY_S = 1.0  # the progress bar is a view: at most one update a second

_RETRY = dict(retries=2, retry_delay_seconds=[2, 10], retry_condition_fn=retry_transient)
# what a retried flow run re-uses, in storage every worker reads (not this worker's $PREFECT_HOME)
_KEPT = dict(persist_result=True, result_storage=result_storage())


async def _phase(run_id: str, fn, *args, **kwargs):
    """Run one core phase in a worker thread, in its own session (opened and closed here)."""

    def body():
        s = RunSession(run_id)
        try:
            with phase_slots():  # every warehouse statement takes a slot of the warehouse's limit
                return fn(s, *args, **kwargs)
        except BaseException as exc:
            # Prefect keeps a failed task's exception; its frames' locals (the warehouse, its connection)
            # would live as long as it does. The traceback's lines stay for the log.
            traceback.clear_frames(exc.__traceback__)
            raise
        finally:
            s.close()

    return await in_thread(body)


@task(name="init", cache_key_fn=run_scoped("init"), **_KEPT, **_RETRY)
async def init_task(run_id: str) -> str:
    await _phase(run_id, init_phase)
    return run_id


@task(name="context", cache_key_fn=run_scoped("context"), **_KEPT, **_RETRY)
async def context_task(run_id: str) -> int:
    return len(await _phase(run_id, context_phase))


@task(name="schema", cache_key_fn=run_scoped("schema"), **_KEPT, **_RETRY)
async def schema_task(run_id: str, refresh: bool = False) -> dict:
    return await _phase(run_id, schema_phase, refresh=refresh)


@task(name="exploration", cache_key_fn=run_scoped("exploration"), **_KEPT, **_RETRY)
async def exploration_task(run_id: str, max_steps: int) -> dict:
    progress_id = await acreate_progress_artifact(progress=0.0, description=f"Exploration of run {run_id[:8]}")
    last_progress = [0.0]
    logger = get_run_logger()

    def publish(steps: list[ExplorationStep]) -> None:
        # runs on the artifact worker thread (it carries this task's context): one log line per step in the
        # run's log, the progress bar at most once a second; the digests go into one artifact at the end
        for step in steps:
            logger.info("step %d: %s", step.step, step_line(step))
        now = time.monotonic()
        if now - last_progress[0] >= PROGRESS_EVERY_S:
            last_progress[0] = now
            step = steps[-1]
            update_progress_artifact(progress_id, progress=min(100.0, 100.0 * step.step / max(max_steps, 1)),
                                     description=f"step {step.step}/{max_steps}: {step.summary[:120]}",
                                     _sync=True)

    artifacts = BatchWorker(publish, name=f"artifacts-{run_id[:8]}", max_batch=16)

    def explore(s: RunSession) -> dict:
        finished = exploration_phase(s, on_step=artifacts.put)
        return {"finished": finished, "steps": s.store.step_count(run_id), "project": s.project.id,
                "all": s.store.steps(run_id)}

    try:
        out = await _phase(run_id, explore)
    finally:
        await in_thread(artifacts.close)
    steps = out.pop("all")
    logger.info("exploration %s after %d steps", out["finished"], out["steps"])
    try:
        await aupdate_progress_artifact(progress_id, progress=100.0,
                                        description=f"exploration {out['finished']} after {out['steps']} steps")
        await exploration_artifact(out.pop("project"), run_id, steps)
    except Exception as exc:
        log.warning("exploration artifacts of run %s: %s", run_id, exc)
    out.pop("project", None)
    return out


def step_line(step: ExplorationStep) -> str:
    """One line per step for the run log: what was asked and what came back."""
    # the model's text and the warehouse's errors without control characters (a log shown in a terminal ran an ESC
    # sequence written into a query's purpose: red team 14)
    what = without_controls((step.purpose or step.query or "").strip().replace("\n", " "))[:120]
    if step.error:
        return f"{what} -> error: {without_controls(step.error)[:160]}"
    return f"{what} -> {step.row_count:,} rows"


class AreaFailed(Exception):
    """Raised after an area's failure is recorded, so Prefect marks it failed (and does not cache it)."""


@task(name="analyze-and-verify", cache_key_fn=run_scoped("area"), **_KEPT, **_RETRY)
async def area_task(run_id: str, area: str, redo: bool = False) -> dict:
    # a transient failure (LLM throttled or overloaded, a dropped connection) is raised, so this task's
    # retry policy tries the area again with backoff; any other failure is final for this attempt.
    # An area the run already analysed is kept (resumed from the store) unless ``redo``.
    result: AreaLog = await _phase(run_id, area_phase, area, raise_transient=True, redo=redo)
    logger = get_run_logger()
    if not result.ok:
        logger.warning("area %s failed: %s", area, without_controls(result.error or ""))
        raise AreaFailed(f"area {area}: {result.error}")
    logger.info("area %s: %s", area, await in_thread(area_line, run_id, area, result))
    return result.model_dump(mode="json")


def area_line(run_id: str, area: str, result: AreaLog) -> str:
    """The area's outcome in one line: insights by verdict, steps used."""
    from collections import Counter

    from assay.settings import load_settings
    from assay.store import open_store

    insights, _ = open_store(load_settings()).area_results(run_id).get(area, ([], None))
    verdicts = Counter(i.validation.status.value if i.validation else "unverified" for i in insights)
    said = ", ".join(f"{n} {v}" for v, n in sorted(verdicts.items())) or "none"
    n = len(insights)
    return f"{n} insight{'' if n == 1 else 's'} ({said}) from {len(result.selected_steps)} steps"


@task(name="recommendations", cache_policy=NO_CACHE, **_RETRY)
async def recommendations_task(run_id: str) -> dict:
    return await _phase(run_id, recommendations_phase)


@task(name="save", cache_policy=NO_CACHE, **_RETRY)
async def save_task(run_id: str, error: str | None = None) -> dict:
    result = await _phase(run_id, save_phase, error=error)
    get_run_logger().info("saved: %s run, %d insights, %d recommendations", result.run_type.value,
                          len(result.insights), len(result.recommendations))
    return {"run_type": result.run_type.value, "insights": len(result.insights),
            "recommendations": len(result.recommendations), "errors": result.errors}


@task(name="estimate", cache_policy=NO_CACHE, **_RETRY)
async def estimate_task(project: str, max_steps: int | None = None) -> dict:
    """The cost estimate, as the flow's result and a Markdown artifact (``estimate_only``)."""
    from prefect.artifacts import acreate_markdown_artifact

    from assay.estimate import render_estimate

    def estimate():
        with phase_slots():
            return estimate_project(project, max_steps=max_steps)

    est = await in_thread(estimate)
    try:
        await acreate_markdown_artifact(markdown=render_estimate(est), key=artifact_key("estimate", project),
                                        description=f"Cost estimate of a discovery of {project}")
    except Exception as exc:
        log.warning("could not write the estimate artifact: %s", exc)
    return est.as_dict()
