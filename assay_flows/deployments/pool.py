"""`assay deploy --pool NAME`: the deployments of ``deployments/plan.py`` on a work pool.

Each registered project gets ``discover-<project>`` with its own cron schedule in its time zone (what
prefect.yaml cannot know), beside ``rerun-areas`` and ``maintenance``. A worker on the pool
(`prefect worker start --pool NAME`) imports the flows from the installed package, so it needs assay
installed, not a checkout.
"""

from __future__ import annotations

import sys

from assay.errors import UserError
from assay_flows.deployments.plan import discovery_deployments, operations_deployments


def deploy_to_pool(pool: str, warn=lambda line: print(line, file=sys.stderr)) -> list[str]:
    """Create or update every deployment on the work pool; returns their full names."""
    from prefect.client.orchestration import get_client
    from prefect.exceptions import ObjectNotFound

    with get_client(sync_client=True) as client:
        try:
            client.read_work_pool(pool)
        except ObjectNotFound:
            raise UserError(f"no work pool {pool!r} on the Prefect server: create it with "
                            f"`prefect work-pool create {pool} --type process`") from None
    deployments = [*discovery_deployments(warn, module_path=True), *operations_deployments(module_path=True)]
    for d in deployments:
        d.apply(work_pool_name=pool)
    return [d.full_name for d in deployments]
