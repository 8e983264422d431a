"""One Prefect task per phase. Each takes ids, not data, and calls the core."""

from __future__ import annotations

import logging

from prefect import task
from prefect.artifacts import acreate_progress_artifact, aupdate_progress_artifact, update_progress_artifact
from prefect.cache_policies import NO_CACHE

from assay import pipeline
from assay.models import AreaLog, ExplorationStep

from .artifacts import report_artifact, step_digest_artifact
from .common import in_thread, retry_transient, run_scoped

log = logging.getLogger("assay")

_RETRY = dict(retries=2, retry_delay_seconds=[2, 10], retry_condition_fn=retry_transient)


def _session(run_id: str) -> pipeline.RunSession:
    return pipeline.RunSession(run_id)


@task(name="init", cache_key_fn=run_scoped("init"), persist_result=True, **_RETRY)
async def init_task(run_id: str) -> str:
    def body():
        s = _session(run_id)
        try:
            pipeline.init_phase(s)
        finally:
            s.close()
    await in_thread(body)
    return run_id


@task(name="context", cache_key_fn=run_scoped("context"), persist_result=True, **_RETRY)
async def context_task(run_id: str) -> int:
    def body():
        s = _session(run_id)
        return len(pipeline.context_phase(s))
    return await in_thread(body)


@task(name="schema", cache_key_fn=run_scoped("schema"), persist_result=True, **_RETRY)
async def schema_task(run_id: str, refresh: bool = False) -> dict:
    def body():
        s = _session(run_id)
        try:
            return pipeline.schema_phase(s, refresh=refresh)
        finally:
            s.close()
    return await in_thread(body)


@task(name="exploration", cache_key_fn=run_scoped("exploration"), persist_result=True, **_RETRY)
async def exploration_task(run_id: str, max_steps: int) -> dict:
    progress_id = await acreate_progress_artifact(progress=0.0, description=f"Exploration of run {run_id[:8]}")

    def on_step(step: ExplorationStep) -> None:
        try:
            # called from the worker thread: force Prefect's sync client
            update_progress_artifact(progress_id, progress=min(100.0, 100.0 * step.step / max(max_steps, 1)),
                                     description=f"step {step.step}/{max_steps}: {step.summary[:120]}",
                                     _sync=True)
            step_digest_artifact(step)
        except Exception as exc:  # artifacts are a view; never fail exploration for them
            log.debug("artifact update failed: %s", exc)

    def body():
        s = _session(run_id)
        try:
            finished = pipeline.exploration_phase(s, on_step=on_step)
            return {"finished": finished, "steps": s.store.step_count(run_id)}
        finally:
            s.close()

    out = await in_thread(body)
    try:
        await aupdate_progress_artifact(progress_id, progress=100.0,
                                        description=f"exploration {out['finished']} after {out['steps']} steps")
    except Exception:
        pass
    return out


class AreaFailed(Exception):
    """Raised after an area's failure is recorded, so Prefect marks it failed (and does not cache it)."""


@task(name="analyze-and-verify", cache_key_fn=run_scoped("area"), persist_result=True, **_RETRY)
async def area_task(run_id: str, area: str) -> dict:
    def body() -> AreaLog:
        s = _session(run_id)
        try:
            return pipeline.area_phase(s, area)
        finally:
            s.close()

    result = await in_thread(body)
    if not result.ok:
        raise AreaFailed(f"area {area}: {result.error}")
    return result.model_dump(mode="json")


@task(name="recommendations", cache_policy=NO_CACHE, **_RETRY)
async def recommendations_task(run_id: str) -> dict:
    def body():
        s = _session(run_id)
        try:
            return pipeline.recommendations_phase(s)
        finally:
            s.close()
    return await in_thread(body)


@task(name="save", cache_policy=NO_CACHE, **_RETRY)
async def save_task(run_id: str, error: str | None = None) -> dict:
    def body():
        s = _session(run_id)
        try:
            return pipeline.save_phase(s, error=error)
        finally:
            s.close()
    result = await in_thread(body)
    try:
        await report_artifact(result)
    except Exception as exc:
        log.warning("could not write the report artifact: %s", exc)
    return {"run_type": result.run_type.value, "insights": len(result.insights),
            "recommendations": len(result.recommendations), "errors": result.errors}
