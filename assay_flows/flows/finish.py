"""Saving a run again after some of its areas ran once more (`assay rerun`, or an area flow run retried on its
own from the UI): recommendations, the discovery, its report, and the discovery's flow run told."""

from __future__ import annotations

from assay.settings import load_settings
from assay.store import open_store
from assay_flows.tasks.artifacts import publish_report
from assay_flows.tasks.phases import recommendations_task, save_task

from .hooks import drop_run_collection_of, notify_run_id
from .runstate import mirror


async def save_again(run_id: str, what: str) -> dict:
    """``what`` names what ran again, for the discovery flow run's new state message."""
    try:
        await recommendations_task(run_id)
        summary = await save_task(run_id)
        await publish_report(run_id)
    finally:
        drop_run_collection_of(run_id)
    notify_run_id(run_id)
    # the discovery's own flow run now says what the run says (a Partial made whole is Completed)
    await mirror(open_store(load_settings()).get_run(run_id), message=f"{what}: {summary['run_type']}")
    return summary
