"""One Prefect task per phase. Each takes ids, not data, and calls the core."""

from __future__ import annotations

import logging
import time

from prefect import task
from prefect.artifacts import acreate_progress_artifact, aupdate_progress_artifact, update_progress_artifact
from prefect.cache_policies import NO_CACHE

from assay import pipeline
from assay.background import BatchWorker
from assay.models import AreaLog, ExplorationStep

from .artifacts import artifact_key, report_artifact, step_digest_artifact
from .common import in_thread, retry_transient, run_scoped

log = logging.getLogger("assay")

PROGRESS_EVERY_S = 1.0  # the progress bar is a view: at most one update a second

_RETRY = dict(retries=2, retry_delay_seconds=[2, 10], retry_condition_fn=retry_transient)


async def _phase(run_id: str, fn, *args, **kwargs):
    """Run one core phase in a worker thread, in its own session (opened and closed here)."""

    def body():
        s = pipeline.RunSession(run_id)
        try:
            return fn(s, *args, **kwargs)
        finally:
            s.close()

    return await in_thread(body)


@task(name="init", cache_key_fn=run_scoped("init"), persist_result=True, **_RETRY)
async def init_task(run_id: str) -> str:
    await _phase(run_id, pipeline.init_phase)
    return run_id


@task(name="context", cache_key_fn=run_scoped("context"), persist_result=True, **_RETRY)
async def context_task(run_id: str) -> int:
    return len(await _phase(run_id, pipeline.context_phase))


@task(name="schema", cache_key_fn=run_scoped("schema"), persist_result=True, **_RETRY)
async def schema_task(run_id: str, refresh: bool = False) -> dict:
    return await _phase(run_id, pipeline.schema_phase, refresh=refresh)


@task(name="exploration", cache_key_fn=run_scoped("exploration"), persist_result=True, **_RETRY)
async def exploration_task(run_id: str, max_steps: int) -> dict:
    progress_id = await acreate_progress_artifact(progress=0.0, description=f"Exploration of run {run_id[:8]}")
    last_progress = [0.0]

    def publish(steps: list[ExplorationStep]) -> None:
        # runs on the artifact worker thread: force Prefect's sync client
        for step in steps:
            step_digest_artifact(step)
        now = time.monotonic()
        if now - last_progress[0] >= PROGRESS_EVERY_S:
            last_progress[0] = now
            step = steps[-1]
            update_progress_artifact(progress_id, progress=min(100.0, 100.0 * step.step / max(max_steps, 1)),
                                     description=f"step {step.step}/{max_steps}: {step.summary[:120]}",
                                     _sync=True)

    artifacts = BatchWorker(publish, name=f"artifacts-{run_id[:8]}", max_batch=16)

    def explore(s: pipeline.RunSession) -> dict:
        finished = pipeline.exploration_phase(s, on_step=artifacts.put)
        return {"finished": finished, "steps": s.store.step_count(run_id)}

    try:
        out = await _phase(run_id, explore)
    finally:
        await in_thread(artifacts.close)
    try:
        await aupdate_progress_artifact(progress_id, progress=100.0,
                                        description=f"exploration {out['finished']} after {out['steps']} steps")
    except Exception as exc:
        log.debug("progress artifact: %s", exc)
    return out


class AreaFailed(Exception):
    """Raised after an area's failure is recorded, so Prefect marks it failed (and does not cache it)."""


@task(name="analyze-and-verify", cache_key_fn=run_scoped("area"), persist_result=True, **_RETRY)
async def area_task(run_id: str, area: str) -> dict:
    # a transient failure (LLM throttled or overloaded, a dropped connection) is raised, so this task's
    # retry policy tries the area again with backoff; any other failure is final for this attempt
    result: AreaLog = await _phase(run_id, pipeline.area_phase, area, raise_transient=True)
    if not result.ok:
        raise AreaFailed(f"area {area}: {result.error}")
    return result.model_dump(mode="json")


@task(name="recommendations", cache_policy=NO_CACHE, **_RETRY)
async def recommendations_task(run_id: str) -> dict:
    return await _phase(run_id, pipeline.recommendations_phase)


@task(name="save", cache_policy=NO_CACHE, **_RETRY)
async def save_task(run_id: str, error: str | None = None) -> dict:
    result = await _phase(run_id, pipeline.save_phase, error=error)
    try:
        await report_artifact(result)
    except Exception as exc:
        log.warning("could not write the report artifact: %s", exc)
    return {"run_type": result.run_type.value, "insights": len(result.insights),
            "recommendations": len(result.recommendations), "errors": result.errors}


@task(name="estimate", cache_policy=NO_CACHE, **_RETRY)
async def estimate_task(project: str, max_steps: int | None = None) -> dict:
    """The cost estimate, as the flow's result and a Markdown artifact (``estimate_only``)."""
    from prefect.artifacts import acreate_markdown_artifact

    from assay.estimate import render_estimate

    est = await in_thread(lambda: pipeline.estimate_project(project, max_steps=max_steps))
    try:
        await acreate_markdown_artifact(markdown=render_estimate(est), key=artifact_key("estimate", project),
                                        description=f"Cost estimate of a discovery of {project}")
    except Exception as exc:
        log.warning("could not write the estimate artifact: %s", exc)
    return est.as_dict()
