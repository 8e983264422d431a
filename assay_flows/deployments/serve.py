"""Every deployment of assay, served by one process (`assay serve`; no work pool needed).

- ``discover-<project>``: a discovery of each registered project, on the project's cron schedule;
  its run form is DiscoveryParams (project, max steps, min steps, areas, estimate only).
- ``rerun-areas``: re-run some analysis areas of an existing run (RerunParams: run, areas).
- ``reverify``: re-verify a run's insights against today's warehouse (ReverifyParams: run, insights).
- ``maintenance``: orphaned step collections and old runs, daily.

Users with work pools deploy the same flows with `prefect deploy --all` (prefect.yaml).
"""

from __future__ import annotations

import sys

from prefect import serve
from prefect.client.schemas.objects import ConcurrencyLimitConfig, ConcurrencyLimitStrategy
from prefect.schedules import Cron

from assay.config import cron_error
from assay.settings import load_settings
from assay.store import open_store
from assay_flows.flows.discovery import DiscoveryParams, discovery_flow
from assay_flows.flows.maintenance import MaintenanceParams, maintenance_flow
from assay_flows.flows.rerun import rerun_flow
from assay_flows.flows.reverify import reverify_flow

MAINTENANCE_CRON = "17 3 * * *"

# one discovery of a project at a time; a second one (a schedule firing while a manual run is on) waits its
# turn instead of colliding with the first on the warehouse and the local index
ONE_AT_A_TIME = ConcurrencyLimitConfig(limit=1, collision_strategy=ConcurrencyLimitStrategy.ENQUEUE)


def _schedules(p) -> list | None:
    """The project's cron schedule; None when it has none. A bad stored schedule skips this project
    (with one line), never every project: ValueError names it."""
    if not p.schedule:
        return None
    why = cron_error(p.schedule)
    if why:
        raise ValueError(why)
    try:
        return [Cron(p.schedule)]
    except Exception as exc:  # whatever Prefect refuses beyond cron_error
        raise ValueError(f"{p.schedule!r}: {str(exc).strip().splitlines()[-1]}") from None


def discovery_deployments(warn=lambda line: print(line, file=sys.stderr)):
    out = []
    for p in open_store(load_settings()).list_projects():
        try:
            schedules = _schedules(p)
        except ValueError as exc:
            warn(f"skipped project {p.id}: schedule: {exc}; fix it with `assay project apply`")
            continue
        out.append(discovery_flow.to_deployment(
            name=f"discover-{p.id}",
            parameters={"params": DiscoveryParams(project=p.id).model_dump()},
            schedules=schedules,
            concurrency_limit=ONE_AT_A_TIME,
            tags=["assay", p.pack],
            description=f"Discovery of project {p.id} ({p.pack})",
        ))
    return out


def operations_deployments():
    return [
        rerun_flow.to_deployment(name="rerun-areas", tags=["assay"],
                                 description="Analyse some areas of a finished run again from its exploration"),
        reverify_flow.to_deployment(name="reverify", tags=["assay"],
                                    description="Re-verify a run's insights against today's warehouse"),
        maintenance_flow.to_deployment(name="maintenance", tags=["assay"], schedules=[Cron(MAINTENANCE_CRON)],
                                       parameters={"params": MaintenanceParams().model_dump()},
                                       description="Drop orphaned step collections; delete old runs"),
    ]


def main() -> None:
    deployments = discovery_deployments()
    if not deployments:
        raise SystemExit("no project to serve: register one with `assay project apply -f project.yaml`")
    serve(*deployments, *operations_deployments())


if __name__ == "__main__":
    main()
