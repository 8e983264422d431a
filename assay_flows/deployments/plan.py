"""The deployments of assay, one naming scheme for both ways of running them.

- ``assay-discovery/discover-<project>``: a discovery of each registered project, on the project's cron
  schedule read in its time zone (``schedule``, ``timezone`` in the project YAML); one at a time, queued.
- ``assay-discovery/discovery``: a discovery of any project, filled in on the run form (no schedule).
- ``assay-rerun-areas/rerun-areas``: re-run some analysis areas of an existing run.
- ``assay-area/area``: one analysis area of a run. A discovery on a work pool submits each of its areas here,
  so the pool's workers share them (``assay_flows/flows/areas.py``); a failed one is retried on its own.
- ``assay-maintenance/maintenance``: orphaned step collections and old runs, daily.

The same names are made by `assay serve` (one process, no work pool), by `assay deploy --pool P` (the
project schedules on a work pool) and by `prefect deploy --all` (prefect.yaml: the generic ones). A
deployment that already lives on a work pool is the pool's: `assay serve` leaves it alone (it neither takes
it over nor pauses it when it stops).
"""

from __future__ import annotations

import sys

from prefect.client.schemas.objects import ConcurrencyLimitConfig, ConcurrencyLimitStrategy
from prefect.deployments.runner import EntrypointType
from prefect.schedules import Cron

from assay.config import cron_error, timezone_error
from assay.settings import load_settings
from assay.store import open_store
from assay_flows.flows.area import AREA_DEPLOYMENT, area_flow
from assay_flows.flows.discovery import DiscoveryParams, discovery_flow
from assay_flows.flows.maintenance import MaintenanceParams, maintenance_flow
from assay_flows.flows.rerun import rerun_flow
from assay_flows.flows.reverify import reverify_flow

MAINTENANCE_CRON = "17 3 * * *"
DISCOVERY, RERUN, MAINTENANCE = "discovery", "rerun-areas", "maintenance"
REVERIFY = "reverify"
AREA = AREA_DEPLOYMENT.split("/")[1]

# one discovery of a project at a time; a second one (a schedule firing while a manual run is on) waits its
# turn instead of colliding with the first on the warehouse and the local index
ONE_AT_A_TIME = ConcurrencyLimitConfig(limit=1, collision_strategy=ConcurrencyLimitStrategy.ENQUEUE)


def discovery_name(project_id: str) -> str:
    return f"discover-{project_id}"


def project_schedules(p) -> list | None:
    """The project's cron schedule in its time zone; None when it has none. A bad stored schedule skips this
    project (with one line), never every project: ValueError names it."""
    if not p.schedule:
        return None
    why = cron_error(p.schedule)
    if why:
        raise ValueError(why)
    tz = getattr(p, "timezone", None)
    if tz and (why := timezone_error(tz)):
        raise ValueError(f"timezone {why}")
    try:
        return [Cron(p.schedule, timezone=tz or "UTC")]
    except Exception as exc:  # whatever Prefect refuses beyond cron_error
        raise ValueError(f"{p.schedule!r}: {str(exc).strip().splitlines()[-1]}") from None


def _kw(module_path: bool) -> dict:
    # on a work pool the worker imports the flow from the installed package (flows.*), wherever it runs
    return {"entrypoint_type": EntrypointType.MODULE_PATH} if module_path else {}


def discovery_deployments(warn=lambda line: print(line, file=sys.stderr), *, module_path: bool = False):
    out = []
    for p in open_store(load_settings()).list_projects():
        try:
            schedules = project_schedules(p)
        except ValueError as exc:
            warn(f"skipped project {p.id}: schedule: {exc}; fix it with `assay project apply`")
            continue
        out.append(discovery_flow.to_deployment(
            name=discovery_name(p.id),
            parameters={"params": DiscoveryParams(project=p.id).model_dump()},
            schedules=schedules,
            concurrency_limit=ONE_AT_A_TIME,
            tags=["assay", p.pack],
            description=f"Discovery of project {p.id} ({p.pack})",
            **_kw(module_path),
        ))
    return out


def operations_deployments(*, module_path: bool = False):
    return [
        area_flow.to_deployment(name=AREA, tags=["assay"], **_kw(module_path),
                                description="One analysis area of a run (a discovery on a work pool submits each "
                                            "area here; Retry a failed one on its own)"),
        rerun_flow.to_deployment(name=RERUN, tags=["assay"], **_kw(module_path),
                                 description="Analyse some areas of a finished run again from its exploration"),
        reverify_flow.to_deployment(name=REVERIFY, tags=["assay"], **_kw(module_path),
                                    description="Re-verify a run's insights against today's warehouse"),
        maintenance_flow.to_deployment(name=MAINTENANCE, tags=["assay"],
                                       schedules=[Cron(MAINTENANCE_CRON, timezone="UTC")],
                                       parameters={"params": MaintenanceParams().model_dump()}, **_kw(module_path),
                                       description="Drop orphaned step collections; delete old runs, their flow "
                                                   "runs, artifacts and persisted results"),
    ]

