"""Maintenance: sweep orphaned step collections (also done at the start of every discovery) and
delete old runs with everything they wrote."""

from __future__ import annotations

from prefect import flow, get_run_logger
from pydantic import BaseModel, Field

from assay import limits
from assay.services.maintenance import prune_runs, sweep_run_collections
from assay.settings import load_settings
from assay.store import open_store
from assay.vectors.index import open_index


class MaintenanceParams(BaseModel):
    keep_days: float = Field(default=limits.KEEP_RUNS_DAYS, gt=0,
                             description="Delete runs that ended more than this many days ago")
    keep_last: int = Field(default=limits.KEEP_LAST_RUNS, ge=1,
                           description="Always keep this many latest runs of every project")


@flow(name="assay-maintenance")
def maintenance_flow(params: MaintenanceParams | None = None) -> dict:
    params = params or MaintenanceParams()
    settings = load_settings()
    store = open_store(settings)
    dropped = sweep_run_collections(store, open_index(settings))
    deleted = prune_runs(store, keep_days=params.keep_days, keep_last=params.keep_last)
    log = get_run_logger()
    log.info("dropped %d orphaned step collections; deleted %d old runs", len(dropped), len(deleted))
    return {"dropped_collections": dropped, "deleted_runs": deleted}
