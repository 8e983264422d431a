"""One analysis area of a run: pick, analyse, verify. Its own subflow."""

from __future__ import annotations

from prefect import flow

from tasks.phases import area_task


@flow(name="assay-area", flow_run_name="{area}", log_prints=True)
async def area_flow(run_id: str, area: str) -> dict:
    return await area_task(run_id, area)
