"""`assay rerun RUN --area A` and the rerun flow: only those areas run again, from the stored
exploration; their insights are replaced in place, recommendations are redone."""

from __future__ import annotations

import asyncio
import json

import pytest
from typer.testing import CliRunner

from assay.cli import app
from assay.llm import register_scripted
from assay.llm.scripted import ScriptedLLM
from assay.models import LLMConfig, Project, RunStatus, WarehouseConfig
from assay.settings import load_settings
from assay.store import open_store
from assay_flows.flows.discovery import DiscoveryParams, discovery_flow
from assay_flows.flows.rerun import RerunParams, rerun_flow
from tests.helpers import small_warehouse

CALLS: list[str] = []
VERSION = {"n": 1}


def handler(req):
    CALLS.append(req.purpose)
    if req.purpose == "explore":
        if req.meta["step"] <= 2:
            purpose = ("customers by channel (conversion funnel check)" if req.meta["step"] == 1
                       else "revenue by channel: order value per customer")
            return json.dumps({"purpose": purpose,
                               "query": f"SELECT channel, count(*) AS n, {req.meta['step']} AS k FROM customers "
                                        f"GROUP BY 1 ORDER BY 1"})
        return '{"done": true, "summary": "enough"}'
    if req.purpose.startswith("analyze:"):
        area = req.purpose.split(":", 1)[1]
        return json.dumps({"insights": [{"name": f"{area} finding v{VERSION['n']}", "description": "paid vs organic",
                                         "severity": "medium", "affected_count": 66, "source_steps": [1]}]})
    if req.purpose == "verify":
        return '{"query": "SELECT count(*) AS count FROM customers WHERE channel = \'paid\'"}'
    if req.purpose == "recommend":
        return json.dumps({"recommendations": [{"title": f"Act v{VERSION['n']}", "priority": 1,
                                                "related_insight_ids": req.meta["insight_ids"]}]})
    raise AssertionError(req.purpose)


register_scripted("reruntest", lambda cfg: ScriptedLLM(handler))


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    db = small_warehouse(tmp_path_factory.mktemp("rerun") / "w.duckdb")
    p = Project(id="reruntest", pack="ecommerce", max_steps=5,
                warehouse=WarehouseConfig(kind="duckdb", settings={"path": str(db)}),
                llm=LLMConfig(provider="scripted", model="reruntest"))
    open_store(load_settings()).save_project(p)
    state = asyncio.run(discovery_flow(DiscoveryParams(project=p.id, areas=["conversion", "revenue"]),
                                       run_id="rerun1", return_state=True))
    assert state.is_completed()
    return "rerun1"


def test_rerun_replaces_only_the_named_area(finished_run):
    store = open_store(load_settings())
    steps_before = store.step_count(finished_run)
    CALLS.clear()
    VERSION["n"] = 2
    state = asyncio.run(rerun_flow(RerunParams(run=finished_run[:5], areas=["revenue"]), return_state=True))
    assert state.is_completed(), state.message
    assert CALLS.count("explore") == 0  # the stored exploration is re-used
    assert [c for c in CALLS if c.startswith("analyze:")] == ["analyze:revenue"]
    assert "recommend" in CALLS
    after = store.get_result(finished_run)
    names = sorted(i.name for i in after.insights)
    assert names == ["conversion finding v1", "revenue finding v2"]  # revenue replaced, conversion kept
    assert after.recommendations[0].title == "Act v2"
    assert store.step_count(finished_run) == steps_before
    run = store.get_run(finished_run)
    assert run.status == RunStatus.completed and run.areas == ["conversion", "revenue"]

    # an area the run did not analyse is added to it
    state = asyncio.run(rerun_flow(RerunParams(run=finished_run, areas=["retention"]), return_state=True))
    assert state.is_completed()
    assert sorted(i.area for i in store.get_result(finished_run).insights) == ["conversion", "retention", "revenue"]


def test_rerun_refusals_are_failed_states_with_a_reason(finished_run):
    state = asyncio.run(rerun_flow(RerunParams(run=finished_run, areas=["nope"]), return_state=True))
    assert state.is_failed() and "unknown area 'nope'" in state.message
    store = open_store(load_settings())
    store.update_run(finished_run, status=RunStatus.running)
    try:
        state = asyncio.run(rerun_flow(RerunParams(run=finished_run, areas=["revenue"]), return_state=True))
        assert state.is_failed() and "still running" in state.message
    finally:
        store.update_run(finished_run, status=RunStatus.completed)


def test_cli_rerun(finished_run):
    runner = CliRunner()
    VERSION["n"] = 3
    r = runner.invoke(app, ["rerun", finished_run, "--area", "conversion"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert "conversion finding v3" in r.output
    r = runner.invoke(app, ["rerun", finished_run, "--area", "nope"])
    assert r.exit_code == 2 and r.output.startswith("error:") and "unknown area 'nope'" in r.output
    r = runner.invoke(app, ["rerun", "zzzz", "--area", "revenue"])
    assert r.exit_code == 2 and "zzzz" in r.output
