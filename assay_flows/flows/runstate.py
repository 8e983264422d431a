"""One truth about a run: the discovery's flow run ends in the state the run ended in (full, partial,
failed, crashed), and keeps mirroring it when `assay rerun` or the crash check change it later.

- full: ``Completed``; partial: ``Completed`` named **Partial** (the discovery is saved; Retry, or
  `assay rerun --area`, redoes the failed areas); failed: ``Failed``; crashed: ``Crashed``.
"""

from __future__ import annotations

import logging
import os

from prefect.states import Cancelled, Completed, Crashed, Failed, State

from assay.models import DiscoveryRun, RunStatus

log = logging.getLogger("assay")


def run_state(run: DiscoveryRun, message: str | None = None, data=None) -> State:
    """The Prefect state that says what the run document says."""
    if run.status == RunStatus.crashed:
        return Crashed(message=message or run.error or "the run's process stopped")
    if run.status == RunStatus.cancelled:
        return Cancelled(message=message or run.error)
    if run.status == RunStatus.completed:
        if run.run_type is not None and run.run_type.value == "partial":
            return Completed(name="Partial", message=message, data=data)
        return Completed(message=message, data=data)
    return Failed(message=message or run.error or f"run {run.id[:8]} {run.status.value}", data=data)


async def mirror(run: DiscoveryRun, message: str | None = None) -> bool:
    """Set the run's discovery flow run to the run's state (forced: a finished flow run may change its
    mind after a rerun). Logged, never raised: the run document is the record."""
    if not run.flow_run_id:
        return False
    from prefect.client.orchestration import get_client

    try:
        async with get_client() as client:
            await client.set_flow_run_state(run.flow_run_id, run_state(run, message), force=True)
        return True
    except Exception as exc:
        log.warning("could not set the state of flow run %s (run %s): %s", run.flow_run_id, run.id[:8], exc)
        return False


def mirror_crashed(runs: list[DiscoveryRun]) -> None:
    """Tell a Prefect server that these runs crashed (outside a flow: `assay runs`). Only with
    ``PREFECT_API_URL`` set: starting an ephemeral server to tell it nothing it knows is not worth it."""
    if not runs or not os.environ.get("PREFECT_API_URL"):
        return
    import asyncio

    async def all_of_them() -> None:
        for run in runs:
            await mirror(run)

    try:
        asyncio.run(all_of_them())
    except Exception as exc:
        log.warning("could not mark crashed runs in Prefect: %s", exc)


async def run_with_id(flow, parameters: dict, ready) -> State:
    """Run ``flow`` in this process under a flow run created first, so that its id is known before it starts:
    ``ready(run_id)`` gets it (the flow run id without dashes: the assay run id of a discovery). The CLI's
    runs get the same one id as a deployment's."""
    from prefect.client.orchestration import get_client
    from prefect.flow_engine import run_flow_async
    from prefect.states import Pending

    async with get_client() as client:
        flow_run = await client.create_flow_run(flow, parameters=flow.serialize_parameters(parameters),
                                                state=Pending())
    ready(flow_run.id.hex)
    return await run_flow_async(flow, flow_run=flow_run, parameters=parameters, return_type="state")
