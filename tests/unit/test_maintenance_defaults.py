"""Maintenance defaults live in one place (assay/limits.py): the flow's run form, prune_runs and the
deployments of prefect.yaml all read them, so changing one number changes every path."""

from __future__ import annotations

import inspect
from pathlib import Path

import yaml

from assay import limits
from assay.services.maintenance import prune_runs

ROOT = Path(__file__).resolve().parents[2]


def test_one_place_for_the_maintenance_defaults():
    from assay_flows.flows.maintenance import MaintenanceParams  # here: the unit tier collects without Prefect

    params = MaintenanceParams()
    assert (params.keep_days, params.keep_last) == (limits.KEEP_RUNS_DAYS, limits.KEEP_LAST_RUNS)
    sig = inspect.signature(prune_runs).parameters
    assert (sig["keep_days"].default, sig["keep_last"].default) == (limits.KEEP_RUNS_DAYS, limits.KEEP_LAST_RUNS)
    maintenance = next(d for d in yaml.safe_load((ROOT / "prefect.yaml").read_text())["deployments"]
                       if d["name"] == "maintenance")
    assert "parameters" not in maintenance  # the flow's defaults apply: no second copy of the numbers
