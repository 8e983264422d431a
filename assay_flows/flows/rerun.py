"""Re-run some analysis areas of a finished or partial run from its stored exploration.

The areas' insights are replaced in place, recommendations are redone, and the
discovery is saved again under the same run id. This is the flow behind
`assay rerun RUN --area AREA` and the area-analysis deployment.
"""

from __future__ import annotations

from prefect import flow, get_run_logger
from prefect.states import Failed
from pydantic import BaseModel, Field

from assay.errors import UserError
from assay.liveness import Heartbeat
from assay.run.lifecycle import prepare_rerun
from assay.settings import load_settings
from assay.store import open_store
from assay.vectors.embedder import warm_up_if_cold

from .areas import placement_here, run_areas
from .finish import save_again


class RerunParams(BaseModel):
    """The run form of the area-analysis deployment."""

    run: str = Field(description="Run id (or a unique prefix of it), see `assay runs`")
    areas: list[str] = Field(min_length=1, description="Analysis areas to run again, e.g. churn")


@flow(name="assay-rerun-areas", flow_run_name="{params.run}: {params.areas}", log_prints=True)
async def rerun_flow(params: RerunParams):
    warm_up_if_cold()  # its discovery's vectors are cached; a host that never embedded loads the model now
    store = open_store(load_settings())
    try:
        run = prepare_rerun(store, params.run, params.areas)
        placement = placement_here()
    except UserError as exc:
        return Failed(message=str(exc))
    logger = get_run_logger()
    logger.info("re-running %s of run %s; %s", ", ".join(params.areas), run.id, placement)
    with Heartbeat(store, run.id):
        why: dict[str, str] = {}
        try:
            failed = await run_areas(run.id, list(dict.fromkeys(params.areas)), rerun=True, placement=placement,
                                     why=why)
        except BaseException:
            from .hooks import drop_run_collection_of

            drop_run_collection_of(run.id)
            raise
        summary = await save_again(run.id, f"rerun of {', '.join(params.areas)}")
    if failed:
        return Failed(message=failed_areas_message(store, run.id, failed, why), data=summary)
    return {"run_id": run.id, **summary}


def failed_areas_message(store, run_id: str, failed: list[str], why: dict[str, str]) -> str:
    """One line: which areas failed, why, and whether an earlier analysis of each is kept (a failed attempt never
    erases one: ``Store.save_area``)."""
    parts = []
    for area in failed:
        kept = "; its earlier analysis is kept" if store.area_done(run_id, area) is not None else ""
        reason = " ".join((why.get(area) or "see the run's log").split())[:300]
        parts.append(f"{area} ({reason}{kept})")
    return f"{len(failed)} area(s) failed: {', '.join(parts)}"
