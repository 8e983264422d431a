"""Running a run's analysis areas: subflows in this process, or flow runs of the area deployment on the pool.

``assay.run.placement`` decides (no Prefect there); this module only does what it says:

- in process: the area subflows, gathered concurrently (`assay discover`, `assay serve`, the embedded default);
- as flow runs: each area is submitted with ``run_deployment`` to ``assay-area/area``, so the pool's workers
  share them; this flow run waits for every one, records each area's flow run and final state on the run
  (``DiscoveryRun.area_runs``), and treats an area whose worker died (its heartbeat in the store stops) as
  crashed: the area is failed for this attempt, the run ends partial, and a Retry of the area's flow run or
  of the discovery redoes it (finished areas are kept: they are written once, keyed by run and area).
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from uuid import UUID

from prefect.context import FlowRunContext
from prefect.runtime import flow_run as current_flow_run

from assay.liveness import area_gone_because
from assay.models import AreaLog
from assay.run.placement import Placement, area_runs_setting, place_areas
from assay.settings import load_settings, vector_index_kind
from assay.store import open_store

from .area import AREA_DEPLOYMENT, area_flow

log = logging.getLogger("assay")


def poll_s() -> float:
    """How often the discovery asks the server about its area flow runs (``ASSAY_AREA_POLL_S``, default 1 s)."""
    try:
        return max(0.1, float(os.environ.get("ASSAY_AREA_POLL_S") or 1.0))
    except ValueError:
        return 1.0


WAITING_LOG_S = 60.0  # how often a discovery says that areas still wait for a worker
SUBMIT_RETRY_S = (1.0, 3.0, 10.0, 30.0)  # a busy server (SQLite "database is locked", a 5xx, a timeout)


def _api_hiccup(exc: BaseException) -> bool:
    """A Prefect API error worth trying again: the server busy or unreachable for a moment, not a refusal."""
    import httpx

    if isinstance(exc, (httpx.TransportError, TimeoutError, ConnectionError)):
        return True
    response = getattr(exc, "response", None)
    status = getattr(response, "status_code", None)
    return status is not None and (status >= 500 or status == 429)


def placement_here() -> Placement:
    """Where this flow run's areas go (``assay.run.placement``): from the flow run's own work pool."""
    ctx = FlowRunContext.get()
    fr = ctx.flow_run if ctx is not None else None
    pool = getattr(fr, "work_pool_name", None) if fr is not None and getattr(fr, "deployment_id", None) else None
    return place_areas(area_runs_setting(), work_pool=pool, index_kind=vector_index_kind(load_settings()),
                       deployment=AREA_DEPLOYMENT, api_server=bool(os.environ.get("PREFECT_API_URL")))


async def run_areas(run_id: str, areas: list[str], rerun: bool = False,
                    placement: Placement | None = None, why: dict[str, str] | None = None) -> list[str]:
    """Run the areas where ``placement`` says (in process when not given); returns the areas that failed (and,
    into ``why`` when given, what their failed states say)."""
    if placement is not None and placement.flow_runs:
        return await run_areas_as_flow_runs(run_id, areas, rerun)
    states = await asyncio.gather(*(area_flow(run_id, a, rerun=rerun, return_state=True) for a in areas))
    failed = [(a, st) for a, st in zip(areas, states) if not st.is_completed()]
    if why is not None:
        why.update({a: st.message for a, st in failed if st.message})
    return [a for a, _ in failed]


async def submit_areas(run_id: str, areas: list[str], rerun: bool) -> dict[str, str]:
    """{flow run id: area}: one flow run of the area deployment per area. The idempotency key (this flow run's
    attempt and the area) makes a duplicated submission return the same flow run, never a second one."""
    from prefect.deployments import run_deployment

    parent, attempt = str(current_flow_run.id), current_flow_run.run_count

    async def one(area: str):
        for wait in (*SUBMIT_RETRY_S, None):
            try:  # the same idempotency key on every attempt: a retried submission never makes a second run
                return await run_deployment(AREA_DEPLOYMENT, parameters={"run_id": run_id, "area": area,
                                                                         "rerun": rerun},
                                            timeout=0, idempotency_key=f"{parent}-{attempt}-{area}",
                                            flow_run_name=f"{run_id[:8]}-{area}", tags=["assay", "area"])
            except Exception as exc:
                if wait is None or not _api_hiccup(exc):
                    raise
                log.warning("submitting area %s: %s; again in %.0f s", area, exc, wait)
                await asyncio.sleep(wait)

    runs = await asyncio.gather(*(one(a) for a in areas))
    return {str(fr.id): a for fr, a in zip(runs, areas)}


async def run_areas_as_flow_runs(run_id: str, areas: list[str], rerun: bool = False) -> list[str]:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId
    from prefect.states import Crashed

    from prefect import get_run_logger

    logger = get_run_logger()
    store = open_store(load_settings())
    ids = await submit_areas(run_id, areas, rerun)
    record = {a: {"flow_run": i, "state": "Scheduled"} for i, a in ids.items()}
    store.update_run(run_id, area_runs={**store.get_run(run_id).area_runs, **record})
    logger.info("submitted %d area flow runs: %s", len(ids), ", ".join(f"{a} {i[:8]}" for i, a in ids.items()))
    final: dict[str, object] = {}
    said = time.monotonic()
    async with get_client() as client:
        while len(final) < len(ids):
            await asyncio.sleep(poll_s())
            open_ids = [UUID(i) for i in ids if i not in final]
            try:
                seen = await client.read_flow_runs(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=open_ids)))
            except Exception as exc:  # a busy server: ask again at the next poll
                if not _api_hiccup(exc):
                    raise
                logger.warning("reading the area flow runs: %s; asking again", exc)
                continue
            for fr in seen:
                fid, st = str(fr.id), fr.state
                area = ids[fid]
                if st is None:
                    continue
                if st.is_final():
                    final[fid] = st
                elif st.is_running():
                    why = area_gone_because(store.area_beat(run_id, area), fid)
                    if why:  # its worker died with it: the server would call it Running for ever
                        msg = f"area {area}: {why}"
                        await client.set_flow_run_state(fr.id, Crashed(message=msg), force=True)
                        store.save_area(run_id, area, [], AreaLog(area=area, ok=False, error=f"crashed: {why}"))
                        final[fid] = Crashed(message=msg)
                        logger.warning("%s; Retry its flow run %s or the discovery to redo it", msg, fid)
            if len(final) < len(ids) and time.monotonic() - said >= WAITING_LOG_S:
                said = time.monotonic()
                waiting = [ids[i] for i in ids if i not in final]
                logger.info("waiting for %d area flow runs: %s", len(waiting), ", ".join(waiting))
    states = {ids[i]: st for i, st in final.items()}
    run = store.get_run(run_id)
    store.update_run(run_id, area_runs={**run.area_runs, **{a: {"flow_run": record[a]["flow_run"], "state": st.name}
                                                             for a, st in states.items()}})
    failed = []
    for a in areas:
        saved = store.area_done(run_id, a) is not None
        logger.info("area %s: flow run %s ended %s%s", a, record[a]["flow_run"][:8], states[a].name,
                    "" if states[a].is_completed() or not saved else " after its insights were saved (kept)")
        # the store is the record: an area whose process died after saving its insights is not failed
        if not states[a].is_completed() and not saved:
            failed.append(a)
    return failed
