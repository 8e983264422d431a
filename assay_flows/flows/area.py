"""One analysis area of a run: pick, analyse, verify. A subflow of the discovery in its process, or a flow run
of its own (the ``assay-area/area`` deployment) on any worker of a pool."""

from __future__ import annotations

from prefect import flow, get_run_logger
from prefect.context import FlowRunContext
from prefect.runtime import flow_run as current_flow_run

from assay_flows.tasks.phases import area_task

AREA_DEPLOYMENT = "assay-area/area"


def own_flow_run() -> bool:
    """Whether this area runs as a deployment's flow run (not a subflow in the discovery's process)."""
    ctx = FlowRunContext.get()
    return bool(ctx is not None and getattr(ctx.flow_run, "deployment_id", None))


@flow(name="assay-area", flow_run_name="{area}", log_prints=True)
async def area_flow(run_id: str, area: str, rerun: bool = False) -> dict:
    # a rerun analyses the area again even where an earlier attempt completed (and is cached)
    task = area_task.with_options(refresh_cache=True) if rerun else area_task
    if not own_flow_run():
        return await task(run_id, area, redo=rerun)
    from assay.liveness import AreaHeartbeat
    from assay.settings import load_settings
    from assay.store import open_store
    from assay.vectors.embedder import warm_up_if_cold

    warm_up_if_cold()  # the discovery's vectors are cached on this host: no model needed
    store = open_store(load_settings())
    with AreaHeartbeat(store, run_id, area, str(current_flow_run.id)):
        out = await task(run_id, area, redo=rerun)
    if current_flow_run.run_count > 1:
        await save_if_alone(store, run_id, area)
    return out


async def save_if_alone(store, run_id: str, area: str) -> None:
    """A retried area flow run (Retry in the UI) whose discovery has ended saves the run again, so the run,
    its report and the discovery's flow run show the area; while the discovery still runs, it saves."""
    from assay.liveness import reap_gone_runs
    from assay.models import RunStatus

    reap_gone_runs(store)
    run = store.get_run(run_id)
    if run.status in (RunStatus.running, RunStatus.pending):
        get_run_logger().info("area %s saved; the discovery of run %s, still running, saves the run", area,
                              run_id[:8])
        return
    from .finish import save_again

    summary = await save_again(run_id, f"retry of area {area}")
    store.update_run(run_id, area_runs={**store.get_run(run_id).area_runs,
                                        area: {"flow_run": str(current_flow_run.id), "state": "Completed"}})
    get_run_logger().info("run %s saved again after area %s: %s", run_id[:8], area, summary["run_type"])
