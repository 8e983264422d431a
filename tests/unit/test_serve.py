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


def test_a_projects_schedule_is_read_in_its_time_zone(tmp_path):
    from assay_flows.deployments.serve import discovery_deployments

    store = open_store(load_settings())
    wh = WarehouseConfig(kind="duckdb", settings={"path": str(tmp_path / "w.duckdb")})
    store.save_project(Project(id="serve-tz", warehouse=wh, schedule="0 6 * * 1", timezone="America/New_York"))
    store.save_project(Project(id="serve-utc", warehouse=wh, schedule="0 6 * * 1"))
    store.save_project(Project(id="serve-badtz", warehouse=wh, schedule="0 6 * * 1", timezone="Mars/Olympus"))
    lines: list[str] = []
    deployments = {d.name: d for d in discovery_deployments(warn=lines.append)}
    assert deployments["discover-serve-tz"].schedules[0].schedule.timezone == "America/New_York"
    assert deployments["discover-serve-utc"].schedules[0].schedule.timezone == "UTC"
    assert "discover-serve-badtz" not in deployments
    assert any("serve-badtz" in x and "'Mars/Olympus' is not an IANA time zone" in x for x in lines), lines


def test_the_run_form_has_no_run_id(tmp_path):
    """Both deploy paths build the run form from the flow: `prefect deploy` with parameter_schema(flow), serve and
    `assay deploy` with to_deployment. A run id typed there made a second run whose short id shadowed the first."""
    from prefect.utilities.callables import parameter_schema

    from assay_flows.deployments.serve import discovery_deployments
    from assay_flows.flows.discovery import discovery_flow

    assert list(parameter_schema(discovery_flow).properties) == ["params"]
    store = open_store(load_settings())
    store.save_project(Project(id="serve-form", warehouse=WarehouseConfig(
        kind="duckdb", settings={"path": str(tmp_path / "w.duckdb")})))
    d = next(d for d in discovery_deployments() if d.name == "discover-serve-form")
    assert list(d._parameter_openapi_schema.properties) == ["params"]  # the form: project, steps, areas, goal
