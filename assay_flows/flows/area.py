"""One analysis area of a run: pick, analyse, verify. Its own subflow."""

from __future__ import annotations

from prefect import flow

from assay_flows.tasks.phases import area_task


@flow(name="assay-area", flow_run_name="{area}", log_prints=True)
async def area_flow(run_id: str, area: str, rerun: bool = False) -> dict:
    # a rerun analyses the area again even where an earlier attempt completed (and is cached)
    task = area_task.with_options(refresh_cache=True) if rerun else area_task
    return await task(run_id, area, redo=rerun)
