"""`assay serve`: one project with a bad stored schedule is skipped with a line; the rest are served."""

from __future__ import annotations

from assay.models import Project, WarehouseConfig
from assay.settings import load_settings
from assay.store import open_store


def test_a_bad_stored_schedule_skips_only_that_project(tmp_path):
    from assay_flows.deployments.serve import discovery_deployments

    store = open_store(load_settings())
    wh = WarehouseConfig(kind="duckdb", settings={"path": str(tmp_path / "w.duckdb")})
    # stored around `project apply` (an older version, or the store edited by hand)
    store.save_project(Project(id="serve-bad", warehouse=wh, schedule="61 * * * *"))
    store.save_project(Project(id="serve-good", warehouse=wh, schedule="0 6 * * 1"))
    store.save_project(Project(id="serve-none", warehouse=wh))
    lines: list[str] = []
    deployments = {d.name: d for d in discovery_deployments(warn=lines.append)}
    assert "discover-serve-bad" not in deployments
    assert {"discover-serve-good", "discover-serve-none"} <= set(deployments)
    assert [x for x in lines if "serve-bad" in x] == [
        ("skipped project serve-bad: schedule: '61 * * * *' is not a valid cron expression (five fields: minute hour "
         "day month weekday); fix it with `assay project apply`")]
    assert deployments["discover-serve-good"].schedules[0].schedule.cron == "0 6 * * 1"
