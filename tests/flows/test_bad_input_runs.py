"""Bad input that reaches a run: a missing schema or an empty warehouse is a FAILED run with one clear
line and a non-zero exit (never `full` with exit 0); a failed CLI run prints one line and the log's
path (the traceback is in the log, not on the terminal); flow runs are named after project and run."""

from __future__ import annotations

import asyncio
import json

import duckdb
from typer.testing import CliRunner

from assay.cli import app
from assay.models import Project, WarehouseConfig
from assay.settings import load_settings
from assay.store import open_store
from assay_flows.flows.discovery import DiscoveryParams, discovery_flow
from tests.helpers import small_warehouse


def _save(pid: str, **wh) -> Project:
    p = Project(id=pid, pack="ecommerce", analyst="statistical", max_steps=4,
                warehouse=WarehouseConfig(kind="duckdb", **wh))
    open_store(load_settings()).save_project(p)
    return p


def _cli_discover(pid: str):
    r = CliRunner().invoke(app, ["discover", pid], catch_exceptions=False)
    assert r.exit_code != 0, r.output
    assert "Traceback" not in r.output and "prefect" not in r.output.lower(), r.output
    return r


def test_missing_schema_is_a_failed_run_with_one_line(tmp_path):
    db = small_warehouse(tmp_path / "w.duckdb")
    _save("noschema-run", settings={"path": str(db)}, schemas=["nope"])
    r = _cli_discover("noschema-run")
    errors = [x for x in r.output.splitlines() if x.startswith("error:")]
    assert errors == ["error: warehouse.schemas: schema 'nope' has no tables or does not exist"], r.output
    store = open_store(load_settings())
    run = store.list_runs("noschema-run", 1)[0]
    assert run.status.value == "failed" and "schema 'nope'" in run.error
    assert store.get_result(run.id).run_type.value == "failed"
    assert f"log: {load_settings().home / 'logs' / (run.id + '.log')}" in r.output.replace("\n", "")
    # the run's first line (which analyst), its error and its log: nothing of a result it does not have (the
    # session-16 new user read six lines, "No insights." and a report hint among them)
    assert len(r.output.strip().splitlines()) <= 4 and "No insights" not in r.output and "report" not in r.output
    # afterwards, as a new user read it (session 21): the run stays in the phase it failed in, not "done"; `show`
    # says it failed and why, not which analyst would have run or how to add an LLM; the report counts no
    # re-derived numbers of no insights
    assert run.phase.value == "schema", run.phase
    runner = CliRunner()
    listed = runner.invoke(app, ["runs", "--project", "noschema-run", "--json"], catch_exceptions=False).output
    row = json.loads(listed.splitlines()[0])
    assert row["phase"] == "schema" and row["steps"] == 0 and row["analyst"] == "statistical" and row["started_at"]
    shown = " ".join(runner.invoke(app, ["show", run.id[:8]], catch_exceptions=False).output.split())
    assert "error: warehouse.schemas: schema 'nope'" in shown and "No insights: the run failed" in shown, shown
    assert "statistical analyst ran" not in shown and "LLM" not in shown, shown
    from assay.report.markdown import render_markdown

    md = render_markdown(store.get_result(run.id))
    assert "Re-derived" not in md and "No insights: the run failed" in md, md
    bad = runner.invoke(app, ["runs", "--project", "noschema-rnu"])
    assert bad.exit_code != 0 and "no project 'noschema-rnu'" in bad.output, bad.output


def test_empty_warehouse_is_a_failed_run(tmp_path):
    empty = tmp_path / "empty.duckdb"
    duckdb.connect(str(empty)).close()
    _save("empty-run", settings={"path": str(empty)})
    r = _cli_discover("empty-run")
    assert "the duckdb warehouse has no tables to analyse" in r.output
    run = open_store(load_settings()).list_runs("empty-run", 1)[0]
    assert open_store(load_settings()).get_result(run.id).run_type.value == "failed"


def test_a_failed_run_logs_its_traceback_to_the_log_file_not_the_terminal(tmp_path):
    _save("gone-run", settings={"path": str(tmp_path / "missing.duckdb")})
    r = _cli_discover("gone-run")
    run = open_store(load_settings()).list_runs("gone-run", 1)[0]
    log = load_settings().home / "logs" / f"{run.id}.log"
    text = log.read_text()
    assert "Traceback" in text and "no database file" in text  # the details are kept ...
    assert "Traceback" not in r.output  # ... where the terminal does not show them
    # the terminal's log handlers are back after the run
    import logging

    assert not any(getattr(h, "baseFilename", "") == str(log) for h in logging.getLogger().handlers)


def test_flow_run_is_named_after_project_and_run(tmp_path):
    from prefect.client.orchestration import get_client

    _save("named-run", settings={"path": str(tmp_path / "missing.duckdb")})
    state = asyncio.run(discovery_flow(DiscoveryParams(project="named-run"), run_id="abcdef0123456789",
                                       return_state=True))

    async def name():
        async with get_client() as c:
            return (await c.read_flow_run(state.state_details.flow_run_id)).name

    assert asyncio.run(name()) == "named-run-abcdef01"


def test_areas_forced_onto_a_pool_with_the_local_index_fail_before_the_run_with_one_line(tmp_path, monkeypatch):
    """``ASSAY_AREA_RUNS=deployment`` needs an index other processes can open: with Qdrant local mode the run is
    refused before it explores (one line), and the CLI exits non-zero."""
    db = small_warehouse(tmp_path / "w.duckdb")
    _save("forced-areas", settings={"path": str(db)})
    monkeypatch.setenv("ASSAY_AREA_RUNS", "deployment")
    monkeypatch.delenv("ASSAY_VECTOR_INDEX", raising=False)
    r = _cli_discover("forced-areas")
    errors = [x for x in r.output.splitlines() if x.startswith("error:")]
    assert len(errors) == 1 and "Qdrant local mode admits one process" in errors[0], r.output
    assert all(run.project_id != "forced-areas" for run in open_store(load_settings()).list_runs(limit=200))
