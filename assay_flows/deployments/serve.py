"""Every deployment of assay, served by one process (`assay serve`; no work pool needed).

The names are those of ``deployments/plan.py`` (one scheme for `assay serve`, `assay deploy --pool` and
`prefect deploy --all`). A deployment of the same name that already lives on a work pool belongs to the pool:
it is not served here, so this process neither takes it over nor pauses it when it stops.
"""

from __future__ import annotations

import sys

from assay_flows.deployments.plan import (  # noqa: F401  (re-exported: older imports)
    MAINTENANCE_CRON,
    ONE_AT_A_TIME,
    discovery_deployments,
    operations_deployments,
    project_schedules,
)

_schedules = project_schedules  # the name older tests import


def pool_owned(full_names: list[str]) -> dict[str, str]:
    """{``flow/deployment``: work pool} of the given deployments that exist on the server on a work pool."""
    from prefect.client.orchestration import get_client
    from prefect.exceptions import ObjectNotFound

    owned = {}
    with get_client(sync_client=True) as client:
        for name in full_names:
            try:
                d = client.read_deployment_by_name(name)
            except ObjectNotFound:
                continue
            if d.work_pool_name:
                owned[name] = d.work_pool_name
    return owned


def servable(deployments, warn=lambda line: print(line, file=sys.stderr)):
    """The deployments this process may serve: not those a work pool already runs."""
    owned = pool_owned([d.full_name for d in deployments])
    for d in deployments:
        if d.full_name in owned:
            warn(f"{d.full_name}: runs on work pool {owned[d.full_name]!r}; not served here "
                 f"(delete it with `prefect deployment delete {d.full_name}` to serve it from this process)")
    return [d for d in deployments if d.full_name not in owned]


def main(announce=None) -> list:
    """Serve every deployment this process may until Ctrl-C (or SIGTERM); returns those it served (paused now).
    ``announce(deployments)`` replaces Prefect's start message (which points at a UI the local server has not)."""
    deployments = discovery_deployments()
    if not deployments:
        raise SystemExit("no project to serve: register one with `assay project apply -f project.yaml`")
    ours = servable([*deployments, *operations_deployments()])
    if not ours:
        raise SystemExit("every deployment already runs on a work pool: start a worker there "
                         "(`prefect worker start --pool NAME`) instead of `assay serve`")
    from prefect import serve

    if announce is not None:
        announce(ours)
    serve(*ours, print_starting_message=announce is None)
    return ours


if __name__ == "__main__":
    main()
