"""Re-verify a run's insights against today's warehouse: the flow behind `assay verify` in the Prefect UI."""

from __future__ import annotations

from prefect import flow, get_run_logger
from prefect.states import Failed
from pydantic import BaseModel, Field

from assay.errors import UserError
from assay.reverify import reverify
from assay.settings import load_settings
from assay.store import open_store


class ReverifyParams(BaseModel):
    """The run form of the re-verify deployment."""

    run: str = Field(description="Run id (or a unique prefix of it), see `assay runs`")
    insights: list[str] = Field(default_factory=list, description="Insight ids, e.g. I3; empty: all of them")


@flow(name="assay-reverify", flow_run_name="verify {params.run}", log_prints=True)
def reverify_flow(params: ReverifyParams):
    store = open_store(load_settings())
    try:
        rows = reverify(store, params.run, params.insights or None)
    except UserError as exc:
        return Failed(message=str(exc))
    log = get_run_logger()
    for r in rows:
        log.info("%s %s: %s -> %s", r.insight, r.title[:60], r.before, r.now)
    changed = [r.insight for r in rows if r.changed]
    return {"reverified": len(rows), "changed": changed}
