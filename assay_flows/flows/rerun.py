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
from assay.vectors.embedder import warm_up
from assay_flows.tasks.artifacts import publish_report
from assay_flows.tasks.phases import recommendations_task, save_task

from .discovery import run_areas
from .hooks import drop_run_collection_of, notify_run_id
from .runstate import mirror


class RerunParams(BaseModel):
    """The run form of the area-analysis deployment."""

    run: str = Field(description="Run id (or a unique prefix of it), see `assay runs`")
    areas: list[str] = Field(min_length=1, description="Analysis areas to run again, e.g. churn")


@flow(name="assay-rerun-areas", flow_run_name="{params.run}: {params.areas}", log_prints=True)
async def rerun_flow(params: RerunParams):
    warm_up()  # the picker's embedder loads while Prefect starts the area subflows
    store = open_store(load_settings())
    try:
        run = prepare_rerun(store, params.run, params.areas)
    except UserError as exc:
        return Failed(message=str(exc))
    get_run_logger().info("re-running %s of run %s", ", ".join(params.areas), run.id)
    with Heartbeat(store, run.id):
        try:
            failed = await run_areas(run.id, list(dict.fromkeys(params.areas)), rerun=True)
            await recommendations_task(run.id)
            summary = await save_task(run.id)
            await publish_report(run.id)
        finally:
            drop_run_collection_of(run.id)
    notify_run_id(run.id)
    # the discovery's own flow run now says what the run says (a Partial made whole is Completed)
    await mirror(store.get_run(run.id), message=f"rerun of {', '.join(params.areas)}: {summary['run_type']}")
    if failed:
        return Failed(message=f"{len(failed)} area(s) failed again: {', '.join(failed)}", data=summary)
    return {"run_id": run.id, **summary}
