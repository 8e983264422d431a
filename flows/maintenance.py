"""Maintenance: sweep orphaned step collections (also done at the start of every discovery)."""

from __future__ import annotations

from prefect import flow, get_run_logger

from assay.pipeline import sweep_run_collections
from assay.settings import load_settings
from assay.store import open_store
from assay.vectors.index import open_index


@flow(name="assay-maintenance")
def maintenance_flow() -> dict:
    settings = load_settings()
    dropped = sweep_run_collections(open_store(settings), open_index(settings))
    get_run_logger().info("dropped %d orphaned step collections", len(dropped))
    return {"dropped_collections": dropped}
