"""What maintenance prunes on the Prefect side, as it prunes the store: old flow runs of assay's flows, their
artifacts (step digests hold warehouse values), and persisted task results (what a Retry re-uses).

A flow run is kept while the assay run it carried is kept in the store (the last runs of every project stay
whatever their age), and while it has not ended; otherwise it goes once it ended before the cutoff. Persisted
results live in folders (Prefect's local storage, or the shared folder results are written to): files older
than the cutoff are deleted. Results in object storage (a storage block) are left to the bucket's own
lifecycle rules, and the maintenance log says so.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
from pathlib import Path

from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import (
    ArtifactFilter,
    ArtifactFilterFlowRunId,
    FlowFilter,
    FlowFilterName,
    FlowRunFilter,
    FlowRunFilterEndTime,
    FlowRunFilterState,
    FlowRunFilterStateType,
)
from prefect.client.schemas.objects import StateType

log = logging.getLogger("assay")

ASSAY_FLOWS = ["assay-discovery", "assay-area", "assay-rerun-areas", "assay-maintenance"]
FINAL = [StateType.COMPLETED, StateType.FAILED, StateType.CANCELLED, StateType.CRASHED]
PAGE = 200


def assay_run_of(flow_run) -> str:
    """The assay run a flow run carried: its ``run_id`` parameter (discovery, area), the rerun's run, else
    the flow run's own id (a discovery started from the UI or a schedule)."""
    p = flow_run.parameters or {}
    if p.get("run_id"):
        return str(p["run_id"])
    params = p.get("params")
    if isinstance(params, dict) and params.get("run"):
        return str(params["run"])
    return str(flow_run.id).replace("-", "")


def _kept(assay_run: str, kept: set[str]) -> bool:
    # a rerun's ``run`` may be a unique prefix of the id
    return assay_run in kept or any(k.startswith(assay_run) for k in kept if len(assay_run) >= 6)


async def prune_flow_runs(cutoff: dt.datetime, kept_runs: set[str]) -> dict[str, int]:
    """Delete assay's flow runs that ended before ``cutoff`` and whose assay run is not kept, with their
    artifacts. Returns counts."""
    deleted_runs = deleted_artifacts = 0
    async with get_client() as client:
        offset = 0
        while True:
            page = await client.read_flow_runs(
                flow_filter=FlowFilter(name=FlowFilterName(any_=ASSAY_FLOWS)),
                flow_run_filter=FlowRunFilter(end_time=FlowRunFilterEndTime(before_=cutoff),
                                              state=FlowRunFilterState(type=FlowRunFilterStateType(any_=FINAL))),
                limit=PAGE, offset=offset)
            if not page:
                break
            doomed = [fr for fr in page if not _kept(assay_run_of(fr), kept_runs)]
            offset += len(page) - len(doomed)  # what stays shifts the next page
            if doomed:
                arts = await client.read_artifacts(
                    artifact_filter=ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(any_=[fr.id for fr in doomed])))
                for a in arts:
                    await client.delete_artifact(a.id)
                    deleted_artifacts += 1
                for fr in doomed:
                    await client.delete_flow_run(fr.id)
                    deleted_runs += 1
            if len(page) < PAGE:
                break
    return {"flow_runs": deleted_runs, "artifacts": deleted_artifacts}


def result_folders(extra: list[Path] | None = None) -> list[Path]:
    """Folders task results persist to on this host: Prefect's local storage, and assay's shared results
    folder when one is configured."""
    from prefect.settings import PREFECT_LOCAL_STORAGE_PATH

    found = [Path(PREFECT_LOCAL_STORAGE_PATH.value()).expanduser()]
    try:  # the shared result storage (ASSAY_RESULT_STORAGE), where this version has it
        from assay.settings import load_settings, result_storage_target  # type: ignore[attr-defined]

        kind, where = result_storage_target(load_settings())
        if kind == "path":
            found.append(Path(where))
        elif kind == "block":
            log.info("persisted results in %s are left to that storage's own lifecycle rules", where)
    except ImportError:
        pass
    return list(dict.fromkeys(p for p in [*found, *(extra or [])] if p.is_dir()))


def prune_result_files(cutoff: dt.datetime, folders: list[Path]) -> int:
    """Delete persisted result files last written before ``cutoff``."""
    limit = cutoff.timestamp()
    deleted = 0
    for folder in folders:
        for root, _dirs, files in os.walk(folder):
            for name in files:
                p = Path(root) / name
                try:
                    if p.stat().st_mtime < limit:
                        p.unlink()
                        deleted += 1
                except OSError as exc:  # another worker deleted it, or it is not ours to delete
                    log.debug("could not prune %s: %s", p, exc)
    return deleted
