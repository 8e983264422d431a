"""The discovery flow: eight phases; each analysis area a subflow, or a flow run of its own on a work pool
(``areas.py``)."""

from __future__ import annotations

from prefect import flow, get_run_logger
from prefect.runtime import flow_run as current_flow_run
from prefect.states import Failed
from pydantic import BaseModel, Field
from pydantic.json_schema import SkipJsonSchema

from assay.errors import UserError
from assay.liveness import Heartbeat, reap_gone_runs
from assay.run.lifecycle import create_run, fail_run
from assay.services.maintenance import BackgroundSweep
from assay.settings import load_settings
from assay.store import open_store
from assay.vectors.embedder import warm_up_if_cold
from assay_flows.tasks.artifacts import publish_report
from assay_flows.tasks.phases import (
    context_task,
    estimate_task,
    exploration_task,
    init_task,
    recommendations_task,
    save_task,
    schema_task,
)

from .areas import placement_here, run_areas
from .hooks import END_HOOKS
from .runstate import mirror, run_state


class DiscoveryParams(BaseModel):
    """What a person fills in on the Prefect UI's run form."""

    project: str = Field(description="Project id (see `assay project list`)")
    max_steps: int | None = Field(default=None, ge=1, le=500, description="Exploration steps (default: the project's)")
    min_steps: int | None = Field(default=None, ge=0, description="Reject `done` before this many steps")
    areas: list[str] | None = Field(default=None, description="Only these analysis areas (default: all enabled)")
    goal: str | None = Field(default=None, description="What this run should find out (default: the project's goal)")
    estimate_only: bool = Field(default=False, description="Only predict tokens and cost; run nothing")


def run_name() -> str:
    """``<project>-<run id>``: the flow run names the assay run it carries (``assay show <id>``)."""
    given = current_flow_run.parameters
    params = given.get("params")
    project = params.get("project") if isinstance(params, dict) else getattr(params, "project", "?")
    run_id = given.get("run_id") or str(current_flow_run.id).replace("-", "")
    return f"{project}-{run_id[:8]}"


@flow(name="assay-discovery", flow_run_name=run_name, log_prints=True, **END_HOOKS)
async def discovery_flow(params: DiscoveryParams, run_id: SkipJsonSchema[str | None] = None):
    # run_id is the CLI's own (it watches the run by it); the run form never shows it: an id typed there made a
    # second run whose short id shadowed the first
    logger = get_run_logger()
    if params.estimate_only:
        return await estimate_task(params.project, params.max_steps)
    # a host that never embedded loads the model now, while the run's first phases talk to Prefect and the
    # warehouse; elsewhere it loads at the first text the cache lacks (steps are indexed off the loop's path)
    warm_up_if_cold()
    run_id = run_id or str(current_flow_run.id).replace("-", "")
    store = open_store(load_settings())
    try:
        project = store.get_project(params.project)
        placement = placement_here()  # a setting it refuses fails the run before it starts
        create_run(store, project, run_id=run_id, max_steps=params.max_steps,
                   min_steps=params.min_steps, areas=params.areas,
                   flow_run_id=str(current_flow_run.id), goal=params.goal)
    except UserError as exc:
        return Failed(message=str(exc))
    logger.info("run %s of project %s; %s; %s", run_id, params.project, store.get_run(run_id).analyst_note,
                placement)
    with Heartbeat(store, run_id):  # a run whose process dies is seen as crashed (assay/liveness.py)
        return await _phases(store, run_id, logger, placement)


async def _phases(store, run_id: str, logger, placement=None):
    try:  # runs whose process died: marked crashed (and mirrored) before this one starts
        await mirror_all(reap_gone_runs(store))
    except Exception as exc:  # maintenance never blocks a discovery
        logger.warning("marking crashed runs failed: %s", exc)
    # the boot-time sweep (collections of runs killed before their hooks ran) opens the vector index: on a
    # thread of its own, beside the run's first phases; joined before the run ends
    sweep = BackgroundSweep(store, load_settings())
    try:
        return await _run_phases(store, run_id, placement)
    finally:
        sweep.join(log=logger)


async def _run_phases(store, run_id: str, placement=None):
    try:
        await init_task(run_id)
        await context_task(run_id)
        await schema_task(run_id)
        run = store.get_run(run_id)
        await exploration_task(run_id, run.max_steps)
        failed = await run_areas(run_id, store.get_run(run_id).areas, placement=placement)
    except Exception as exc:
        fail_run(store, run_id, str(exc))
        await save_task(run_id, error=str(exc))
        await publish_report(run_id)
        raise
    await recommendations_task(run_id)
    summary = await save_task(run_id)
    await publish_report(run_id)
    if failed:
        # the discovery is saved; the flow run ends Partial (or Failed when no area succeeded), as the run does:
        # Retry re-runs only these areas, as does `assay rerun --area`
        return run_state(store.get_run(run_id), data=summary, message=(
            f"{len(failed)} area(s) failed: {', '.join(failed)}; run {run_id[:8]} is {summary['run_type']}; "
            f"Retry the flow run or `assay rerun {run_id[:8]} --area AREA` to redo them"))
    return summary


async def mirror_all(runs) -> None:
    for run in runs:
        await mirror(run)
