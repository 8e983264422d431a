"""Serve a discovery deployment for every project (schedule from the project's cron).

`assay serve` runs this: one process, no work pool needed. Users with work pools use
`prefect deploy --all` with prefect.yaml instead.
"""

from __future__ import annotations

from prefect import serve
from prefect.schedules import Cron

from assay.settings import load_settings
from assay.store import open_store
from flows.discovery import DiscoveryParams, discovery_flow


def discovery_deployments():
    out = []
    for p in open_store(load_settings()).list_projects():
        out.append(discovery_flow.to_deployment(
            name=f"discover-{p.id}",
            parameters={"params": DiscoveryParams(project=p.id).model_dump()},
            schedules=[Cron(p.schedule)] if p.schedule else None,
            tags=["assay", p.pack],
            description=f"Discovery of project {p.id} ({p.pack})",
        ))
    return out


def main() -> None:
    deployments = discovery_deployments()
    if not deployments:
        raise SystemExit("no projects yet: register one with `assay project apply -f project.yaml`")
    serve(*deployments)


if __name__ == "__main__":
    main()
