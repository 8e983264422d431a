"""Maintenance prunes the Prefect side as it prunes the store: an old run's flow runs (the discovery and its
area subflows) and their artifacts go with its store documents, and so do persisted result files of that
age; the kept run keeps all of its own. Before, flow runs, artifacts and results were kept for ever."""

from __future__ import annotations

import asyncio
import datetime as dt
import os

from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId
from prefect.settings import PREFECT_LOCAL_STORAGE_PATH

from assay.models import Project, WarehouseConfig, utcnow
from assay.settings import load_settings
from assay.store import open_store
from assay_flows.flows.discovery import DiscoveryParams, discovery_flow
from assay_flows.flows.maintenance import MaintenanceParams, prune_all
from assay_flows.tasks.prune import assay_run_of
from tests.helpers import small_warehouse


async def _flow_runs_of(run_id: str):
    async with get_client() as c:
        runs = [fr for fr in await c.read_flow_runs(limit=200) if assay_run_of(fr) == run_id]
        arts = await c.read_artifacts(artifact_filter=ArtifactFilter(
            flow_run_id=ArtifactFilterFlowRunId(any_=[fr.id for fr in runs]))) if runs else []
        return runs, arts


def test_maintenance_prunes_flow_runs_artifacts_and_results_of_old_runs(tmp_path):
    db = small_warehouse(tmp_path / "w.duckdb")
    p = Project(id="prune-me", pack="ecommerce", analyst="statistical", max_steps=6,
                warehouse=WarehouseConfig(kind="duckdb", settings={"path": str(db)}))
    store = open_store(load_settings())
    store.save_project(p)
    for rid in ("pruneold", "prunenew"):
        state = asyncio.run(discovery_flow(DiscoveryParams(project=p.id), run_id=rid, return_state=True))
        assert state.is_completed(), state.message
    old_runs, old_arts = asyncio.run(_flow_runs_of("pruneold"))
    assert len(old_runs) >= 2 and old_arts  # the discovery and its area subflows; the report at least
    storage = PREFECT_LOCAL_STORAGE_PATH.value()
    storage.mkdir(parents=True, exist_ok=True)
    stale, fresh = storage / "stale-result", storage / "fresh-result"
    stale.write_text("{}")
    fresh.write_text("{}")
    now = utcnow() + dt.timedelta(days=60)  # both runs ended 60 days before "now"
    os.utime(fresh, (now.timestamp() - 86400,) * 2)  # written yesterday, as "now" sees it
    os.utime(stale, (now.timestamp() - 40 * 86400,) * 2)

    out = asyncio.run(prune_all(MaintenanceParams(keep_days=30, keep_last=1), now=now))

    # (other test files' runs in this worker's store may be old by "now" too: only ours are asserted)
    assert "pruneold" in out["deleted_runs"] and "prunenew" not in out["deleted_runs"]
    assert store.has_result("prunenew")
    assert out["deleted_flow_runs"] >= len(old_runs) and out["deleted_artifacts"] >= len(old_arts)
    runs, arts = asyncio.run(_flow_runs_of("pruneold"))
    assert runs == [] and arts == []
    kept_runs, kept_arts = asyncio.run(_flow_runs_of("prunenew"))
    assert len(kept_runs) >= 2 and kept_arts  # the kept run keeps its flow runs and report
    assert not stale.exists() and fresh.exists()
    assert out["deleted_result_files"] >= 1
