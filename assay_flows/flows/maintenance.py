"""Maintenance: sweep orphaned step collections (also done at the start of every discovery), delete old runs
with everything they wrote in the store, and prune the same age on the Prefect side: flow runs, their
artifacts, persisted task results (tasks/prune.py)."""

from __future__ import annotations

import datetime as dt

from prefect import flow, get_run_logger
from pydantic import BaseModel, Field

from assay import limits
from assay.liveness import reap_gone_runs
from assay.models import utcnow
from assay.services.maintenance import prune_runs, sweep_run_collections
from assay.settings import load_settings
from assay.store import open_store
from assay.vectors.index import open_index
from assay_flows.tasks.prune import prune_flow_runs, prune_result_files, result_folders

from .runstate import mirror_crashed


class MaintenanceParams(BaseModel):
    keep_days: float = Field(default=limits.KEEP_RUNS_DAYS, gt=0,
                             description="Delete runs that ended more than this many days ago")
    keep_last: int = Field(default=limits.KEEP_LAST_RUNS, ge=1,
                           description="Always keep this many latest runs of every project")


async def prune_all(params: MaintenanceParams, now: dt.datetime | None = None) -> dict:
    now = now or utcnow()
    settings = load_settings()
    store = open_store(settings)
    mirror_crashed(reap_gone_runs(store))  # runs whose process died: crashed here and on the server
    dropped = sweep_run_collections(store, open_index(settings))
    deleted = prune_runs(store, keep_days=params.keep_days, keep_last=params.keep_last, now=now)
    cutoff = now - dt.timedelta(days=params.keep_days)
    kept = {r.id for r in store.list_runs(None, limit=1_000_000)}
    pruned = await prune_flow_runs(cutoff, kept)
    results = prune_result_files(cutoff, result_folders())
    return {"dropped_collections": dropped, "deleted_runs": deleted, "deleted_flow_runs": pruned["flow_runs"],
            "deleted_artifacts": pruned["artifacts"], "deleted_result_files": results}


@flow(name="assay-maintenance")
async def maintenance_flow(params: MaintenanceParams | None = None) -> dict:
    out = await prune_all(params or MaintenanceParams())
    get_run_logger().info(
        "dropped %d orphaned step collections; deleted %d old runs, %d flow runs, %d artifacts, %d result files",
        len(out["dropped_collections"]), len(out["deleted_runs"]), out["deleted_flow_runs"],
        out["deleted_artifacts"], out["deleted_result_files"])
    return out
