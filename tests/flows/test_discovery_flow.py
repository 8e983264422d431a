"""The discovery flow under Prefect: phases, area subflows, retry re-use, hooks, statistical path."""

from __future__ import annotations

import asyncio
import json

import pytest

from assay.errors import LLMError
from assay.llm import register_scripted
from assay.llm.scripted import ScriptedLLM
from assay.models import LLMConfig, Project, WarehouseConfig
from assay.settings import load_settings
from assay.store import open_store
from assay.vectors.index import open_index, run_collection
from assay_flows.flows.discovery import DiscoveryParams, discovery_flow
from tests.helpers import small_warehouse

CALLS: list[str] = []
FAIL_ONCE: set[str] = set()
THROTTLE_ONCE: set[str] = set()


def handler(req):
    CALLS.append(req.purpose)
    if req.purpose == "explore":
        n = req.meta["step"]
        if n <= 3:
            return json.dumps({"purpose": f"orders by channel {n} (conversion funnel check)",
                               "query": "SELECT c.channel, count(*) AS orders FROM orders o JOIN customers c "
                                        "ON o.customer_id = c.customer_id GROUP BY 1 ORDER BY 1"})
        return '{"done": true, "summary": "enough"}'
    if req.purpose.startswith("analyze:"):
        area = req.purpose.split(":", 1)[1]
        if area in FAIL_ONCE:
            FAIL_ONCE.discard(area)
            raise LLMError(f"scripted failure in {area}")
        if area in THROTTLE_ONCE:
            THROTTLE_ONCE.discard(area)
            from assay.errors import LLMTimeout

            raise LLMTimeout("openai: HTTP 429")
        return json.dumps({"insights": [{"name": f"{area}: paid customers order less", "description": "paid vs organic",
                                         "severity": "high", "affected_count": 66, "source_steps": [1]}]})
    if req.purpose == "verify":
        return '{"query": "SELECT count(*) AS count FROM customers WHERE channel = \'paid\'"}'
    if req.purpose == "recommend":
        ids = req.meta["insight_ids"]
        return json.dumps({"recommendations": [{"title": "Win back paid customers", "priority": 1,
                                                "related_insight_ids": ids + ["nope-9"]}]})
    raise AssertionError(req.purpose)


register_scripted("flowtest", lambda cfg: ScriptedLLM(handler))


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    db = small_warehouse(tmp_path_factory.mktemp("flow") / "w.duckdb")
    p = Project(id="flowtest", pack="ecommerce", max_steps=6,
                warehouse=WarehouseConfig(kind="duckdb", settings={"path": str(db)}),
                llm=LLMConfig(provider="scripted", model="flowtest"))
    open_store(load_settings()).save_project(p)
    return p


def run(project_id, run_id, **kw):
    return asyncio.run(discovery_flow(DiscoveryParams(project=project_id, **kw), run_id=run_id, return_state=True))


def test_failed_area_retry_reuses_exploration(project):
    store = open_store(load_settings())
    CALLS.clear()
    FAIL_ONCE.add("revenue")
    state = run(project.id, "retry1")
    # the flow run says what the run is: Partial (a Completed state), with the failed areas and how to redo them
    assert state.is_completed() and state.name == "Partial" and "revenue" in state.message, state
    assert store.get_run("retry1").run_type.value == "partial"
    first = store.get_result("retry1")
    assert first.run_type.value == "partial"
    assert {log.area: log.ok for log in first.analysis_log} == {"conversion": True, "revenue": False,
                                                              "retention": True}
    explore_calls = CALLS.count("explore")
    assert explore_calls == 4

    CALLS.clear()
    state = run(project.id, "retry1")  # the UI's Retry re-runs the same flow run id
    assert state.is_completed()
    assert CALLS.count("explore") == 0  # exploration re-used
    assert [c for c in CALLS if c.startswith("analyze:")] == ["analyze:revenue"]  # only the failed area ran
    result = store.get_result("retry1")
    assert result.run_type.value == "full" and len(result.insights) == 3
    assert all(i.validation.status.value == "confirmed" for i in result.insights)
    rec = result.recommendations[0]
    assert "nope-9" not in rec.related_insight_ids and len(rec.related_insight_ids) == 3
    assert any("dropped_unknown_insight_ids" in entry for entry in result.recommendation_log)
    assert store.step_count("retry1") == 4  # no step executed twice
    assert not open_index(load_settings()).exists(run_collection("retry1"))  # the hook dropped it


def test_a_throttled_area_is_retried_by_its_task(project):
    """One 429/500 from the LLM in an area's analysis: the area task's retry policy runs it again, in the same
    flow run, and the run ends full (the area no longer fails on its first try)."""
    CALLS.clear()
    THROTTLE_ONCE.add("retention")
    state = run(project.id, "throttled1")
    assert state.is_completed(), state.message
    assert CALLS.count("analyze:retention") == 2 and CALLS.count("analyze:revenue") == 1
    result = open_store(load_settings()).get_result("throttled1")
    assert result.run_type.value == "full" and all(log.ok for log in result.analysis_log)


def flow_run_state(flow_run_id: str):
    from prefect import get_client

    async def read():
        async with get_client() as c:
            return (await c.read_flow_run(flow_run_id)).state

    return asyncio.run(read())


def test_all_areas_failing_is_failed_and_a_rerun_that_mends_it_mends_its_flow_run(project):
    from assay_flows.flows.rerun import RerunParams, rerun_flow

    store = open_store(load_settings())
    FAIL_ONCE.update({"conversion", "revenue", "retention"})
    state = run(project.id, "allfail")
    FAIL_ONCE.clear()
    assert state.is_failed()
    assert store.get_result("allfail").run_type.value == "failed"
    flow_run_id = store.get_run("allfail").flow_run_id
    assert flow_run_state(flow_run_id).is_failed()

    # `assay rerun` of every area makes the run whole: its discovery flow run no longer says Failed
    done = asyncio.run(rerun_flow(RerunParams(run="allfail", areas=["conversion", "revenue", "retention"]),
                                  return_state=True))
    assert done.is_completed(), done.message
    assert store.get_run("allfail").run_type.value == "full"
    mirrored = flow_run_state(flow_run_id)
    assert mirrored.is_completed() and mirrored.name == "Completed", mirrored


def test_unknown_area_fails_fast_with_one_line(project):
    state = run(project.id, "badarea", areas=["nope"])
    assert state.is_failed() and "unknown area 'nope'" in state.message


def test_artifacts_written(project):
    from prefect.client.orchestration import get_client

    async def read():
        async with get_client() as c:
            return await c.read_artifacts()

    arts = [a for a in asyncio.run(read()) if a.key]
    keys = {a.key for a in arts}
    # a handful of artifacts per run, under keys stable per project (Prefect versions them: "latest" works)
    assert {"exploration-flowtest", "report-flowtest"} <= keys
    assert not any(k.startswith("step-") for k in keys)
    report = [a for a in arts if a.key == "report-flowtest"]
    assert len(report) >= 2  # one version per saved run of the project
    assert all(a.task_run_id is None and a.flow_run_id for a in report)  # on the flow run, not on a task
    exploration = next(a for a in arts if a.key == "exploration-flowtest")
    assert "```sql" in exploration.data and "## Step 1" in exploration.data


@pytest.mark.leads_default  # the one flow run on the product's default path: the statistical leads scan on
def test_the_run_log_says_what_each_step_and_area_did(project):
    import time

    from prefect.client.orchestration import get_client

    from prefect.client.schemas.filters import (
        FlowRunFilter,
        FlowRunFilterParentFlowRunId,
        LogFilter,
        LogFilterFlowRunId,
    )

    import logging

    # the test session logs at WARNING (conftest); a user's run logs these lines at INFO
    levels = {n: logging.getLogger(n).level for n in ("prefect.task_runs", "prefect.flow_runs")}
    for n in levels:
        logging.getLogger(n).setLevel(logging.INFO)
    from assay.models import AnalysisConfig

    store = open_store(load_settings())
    store.save_project(project.model_copy(update={"analysis": AnalysisConfig()}))  # the default: leads on
    try:
        state = run(project.id, "logged1")
    finally:
        store.save_project(project)
        for n, level in levels.items():
            logging.getLogger(n).setLevel(level)
    run_row = store.get_run("logged1")
    assert run_row.telemetry.leads_probes > 0, run_row.telemetry  # the scan ran before the exploration
    flow_run_id = state.state_details.flow_run_id

    async def read():
        async with get_client() as c:
            # the run's own flow run, and its area subflow runs (each area logs on its own flow run)
            runs = [flow_run_id] + [r.id for r in await c.read_flow_runs(
                flow_run_filter=FlowRunFilter(parent_flow_run_id=FlowRunFilterParentFlowRunId(any_=[flow_run_id])))]
            logs = await c.read_logs(log_filter=LogFilter(flow_run_id=LogFilterFlowRunId(any_=runs)), limit=200)
            return [entry.message for entry in logs]

    deadline = time.time() + 30  # the log handler ships lines in batches
    while True:
        lines = asyncio.run(read())
        if any(m.startswith("saved: ") for m in lines) or time.time() > deadline:
            break
        time.sleep(0.5)
    assert any(m.startswith("step 1: orders by channel 1 ") and m.endswith(" rows") for m in lines), lines[-20:]
    assert any(m.startswith("area revenue: 1 insight (1 confirmed)") for m in lines), lines[-20:]
    assert any(m.startswith("saved: full run, ") and " insight" in m for m in lines), lines[-20:]


def test_statistical_analyst_without_llm(tmp_path):
    """The statistical path under Prefect (what it finds on the demo: tests/integration/test_statistical_demo.py)."""
    db = small_warehouse(tmp_path / "w.duckdb")
    p = Project(id="stat-flow", pack="ecommerce", max_steps=8,
                warehouse=WarehouseConfig(kind="duckdb", settings={"path": str(db)}))
    open_store(load_settings()).save_project(p)
    state = run(p.id, "stat1")
    assert state.is_completed(), state.message
    store = open_store(load_settings())
    result = store.get_result("stat1")
    assert result.analyst == "statistical" and result.recommendations == []
    assert "Recommendations need an LLM" in result.recommendation_note
    assert result.run_type.value == "full" and result.total_steps == 8
    assert all(s.probe for s in store.steps("stat1"))  # every step is a planned probe
    assert result.analysis_log and all(log.ok for log in result.analysis_log)  # every area ran, under its task


def test_transient_errors_are_retried_terminal_ones_are_not():
    from prefect import flow, task

    from assay.errors import LLMTimeout
    from assay_flows.tasks.common import retry_transient

    attempts = {"transient": 0, "terminal": 0}

    @task(retries=2, retry_delay_seconds=0, retry_condition_fn=retry_transient)
    async def flaky(kind: str) -> str:
        attempts[kind] += 1
        if kind == "transient" and attempts[kind] < 3:
            raise LLMTimeout("rate limited")
        if kind == "terminal":
            raise LLMError("bad key")
        return "ok"

    @flow
    async def f(kind: str):
        return await flaky(kind)

    assert asyncio.run(f("transient")) == "ok" and attempts["transient"] == 3
    assert asyncio.run(f("terminal", return_state=True)).is_failed() and attempts["terminal"] == 1


def _bad_key_llm(cfg):
    from assay.errors import MissingKey

    def handler(req):
        raise MissingKey("anthropic: the API key was rejected (401)")

    return ScriptedLLM(handler)


register_scripted("badkey", _bad_key_llm)


def test_invalid_key_fails_at_once_and_says_why(project):
    p = project.model_copy(update={"id": "badkey", "llm": LLMConfig(provider="scripted", model="badkey")})
    store = open_store(load_settings())
    store.save_project(p)
    CALLS.clear()
    state = run(p.id, "badkey1")
    assert state.is_failed()
    run_doc = store.get_run("badkey1")
    assert run_doc.status.value == "failed" and "API key was rejected" in run_doc.error
    result = store.get_result("badkey1")
    assert result.run_type.value == "failed" and "API key was rejected" in result.errors[0]
    assert store.step_count("badkey1") == 0


def test_unreachable_warehouse_fails_before_exploring(project):
    p = project.model_copy(update={"id": "nowh", "warehouse": WarehouseConfig(
        kind="duckdb", settings={"path": "/nowhere/missing.duckdb"})})
    store = open_store(load_settings())
    store.save_project(p)
    CALLS.clear()
    state = run(p.id, "nowh1")
    assert state.is_failed() and CALLS == []
    assert "no database file at /nowhere/missing.duckdb" in store.get_run("nowh1").error


def test_cli_discover_exits_non_zero_on_a_failed_run_and_says_why(project):
    from typer.testing import CliRunner

    from assay.cli import app

    p = project.model_copy(update={"id": "nowh-cli", "warehouse": WarehouseConfig(
        kind="duckdb", settings={"path": "/nowhere/missing.duckdb"})})
    open_store(load_settings()).save_project(p)
    r = CliRunner().invoke(app, ["discover", "nowh-cli"], catch_exceptions=False)
    assert r.exit_code != 0
    assert "no database file at /nowhere/missing.duckdb" in r.output
    assert "Traceback" not in r.output



def test_a_cli_run_has_its_flow_runs_id(project):
    """`assay discover` used to give the run an id of its own: the Prefect UI showed another. Now the run's id
    is its flow run's id, and its log file is named by it."""
    import re

    from prefect import get_client
    from typer.testing import CliRunner

    from assay.cli import app, run_log_path

    store = open_store(load_settings())
    before = {r.id for r in store.list_runs("flowtest", 100)}
    r = CliRunner().invoke(app, ["discover", "flowtest", "--area", "conversion"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    # an open discovery says how to ask a question of one's own (session 24's new user found --goal nowhere)
    assert 'a question of your own: assay discover flowtest --goal "..."' in " ".join(r.output.split())
    (run,) = [x for x in store.list_runs("flowtest", 100) if x.id not in before]
    assert re.search(rf"Discovery {run.id[:8]}", r.output)
    assert run.flow_run_id.replace("-", "") == run.id

    async def read():
        async with get_client() as c:
            return await c.read_flow_run(run.flow_run_id)

    fr = asyncio.run(read())
    assert fr.name == f"flowtest-{run.id[:8]}" and fr.state.is_completed()
    assert run_log_path(run.id).is_file()


GOAL = "Which channel's customers spend least, and is it so every month?"
GOAL_CALLS: list = []


def goal_handler(req):
    """What the real model did: one ranking, one decisive month-by-segment step, a closing summary that
    ties the numbers across steps."""
    GOAL_CALLS.append(req)
    if req.purpose == "explore":
        n = req.meta["step"]
        if n == 1:
            return json.dumps({"purpose": "customers per channel",
                               "query": "SELECT channel, count(*) AS customers FROM customers GROUP BY 1"})
        if n == 2:
            return json.dumps({"purpose": "spend per month and channel",
                               "query": "SELECT date_trunc('month', o.ordered_at) AS month, c.channel, "
                                        "sum(o.amount) AS spend FROM orders o JOIN customers c "
                                        "ON o.customer_id = c.customer_id GROUP BY 1, 2 ORDER BY 1, 2"})
        return json.dumps({"done": True, "summary": "paid customers spend least in every month (step 2); "
                                                    "they are a third of customers (step 1)"})
    if req.purpose.startswith("analyze:"):
        return json.dumps({"insights": [{"name": "paid customers spend least every month",
                                         "description": "paid vs organic", "severity": "high",
                                         "affected_count": 66, "source_steps": [2]}]})
    if req.purpose == "verify":
        return '{"query": "SELECT count(*) AS count FROM customers WHERE channel = \'paid\'"}'
    if req.purpose == "recommend":
        return json.dumps({"recommendations": [{"title": "Win back paid customers", "priority": 1,
                                                "related_insight_ids": req.meta["insight_ids"]}]})
    raise AssertionError(req.purpose)


register_scripted("goaltest", lambda cfg: ScriptedLLM(goal_handler))


def test_cli_goal_for_a_project_reaches_every_prompt_and_the_picker(project):
    """`assay discover PROJECT --goal` was refused for an existing project. Now the goal is the run's,
    and exploration, analysis and recommendations all state it; the area prompt carries the explorer's
    closing summary; the one area keeps every step and the log says why, per step, with its scores."""
    from typer.testing import CliRunner

    from assay.cli import app

    store = open_store(load_settings())
    p = project.model_copy(update={"id": "goaltest", "pack": "generic",
                                   "llm": LLMConfig(provider="scripted", model="goaltest")})
    store.save_project(p)
    GOAL_CALLS.clear()
    r = CliRunner().invoke(app, ["discover", "goaltest", "--goal", GOAL], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert store.get_project("goaltest").goal is None  # the run's goal, not a change to the project
    run_doc = store.list_runs("goaltest", limit=1)[0]
    assert run_doc.goal == GOAL and "a question of your own" not in r.output
    prompts = {req.purpose: req.system[0].text for req in GOAL_CALLS}
    for purpose in ("explore", "analyze:overview", "recommend"):
        assert f"## Goal of this discovery\n{GOAL}" in prompts[purpose], purpose
        assert "No goal given" not in prompts[purpose] and "used by --goal" not in prompts[purpose]
    analysis = prompts["analyze:overview"]
    assert "## The explorer's own summary (to check, not to trust)" in analysis
    assert "paid customers spend least in every month (step 2)" in analysis
    log = store.get_result(run_doc.id).analysis_log[0]
    assert [e["step"] for e in log.selected_steps] and log.dropped_steps == []
    assert {e["step"] for e in log.selected_steps} == {1, 2}
    assert all({"score", "area_score", "goal_score", "why"} <= set(e) for e in log.selected_steps)
    assert len({e["score"] for e in log.selected_steps}) == 2  # ranked, not tied at the floor
    assert all("cited" in e["source"] for e in log.selected_steps)  # the summary cites steps 1 and 2
    shown = CliRunner().invoke(app, ["show", run_doc.id, "--json"], catch_exceptions=False)
    assert json.loads(shown.output)["analysis_log"][0]["selected_steps"] == log.selected_steps


def test_a_partial_cli_run_exits_3_and_a_bare_rerun_analyses_what_failed(project):
    """A new user (session 24): a partial run exited 0, so a script read it as whole, and no line said how to go
    on; `assay rerun` needed every failed area named; a failed rerun said "failed again" and not why."""
    from typer.testing import CliRunner

    from assay.cli import PARTIAL_EXIT, app

    store = open_store(load_settings())
    before = {r.id for r in store.list_runs("flowtest", 100)}
    FAIL_ONCE.add("revenue")
    r = CliRunner().invoke(app, ["discover", "flowtest"], catch_exceptions=False)
    (run,) = [x for x in store.list_runs("flowtest", 100) if x.id not in before]
    assert r.exit_code == PARTIAL_EXIT, r.output
    assert (f"partial: 1 area(s) have no analysis (revenue); `assay rerun {run.id[:8]}` analyses them again"
            in " ".join(r.output.split())), r.output
    # `assay runs` shows why beside "Partial" (its error column was empty)
    assert store.get_run(run.id).error.startswith("1 area(s) failed: revenue: "), store.get_run(run.id).error
    CALLS.clear()
    r = CliRunner().invoke(app, ["rerun", run.id[:8]], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert [c for c in CALLS if c.startswith("analyze:")] == ["analyze:revenue"]
    assert store.get_result(run.id).run_type.value == "full" and store.get_run(run.id).error is None
    r = CliRunner().invoke(app, ["rerun", run.id[:8]], catch_exceptions=False)
    assert r.exit_code != 0 and "every area of run" in r.output and "--area" in r.output, r.output
    # a rerun that fails says why, and that the earlier analysis is kept
    FAIL_ONCE.add("revenue")
    r = CliRunner().invoke(app, ["rerun", run.id[:8], "--area", "revenue"], catch_exceptions=False)
    text = " ".join(r.output.split())
    assert r.exit_code != 0 and "1 area(s) failed: revenue (" in text, text
    assert "scripted failure in revenue" in text and "its earlier analysis is kept" in text, text


def test_a_steps_log_line_carries_no_control_sequence():
    """Red team 14 (session 26): the run log (Prefect's, shown by workers and `assay serve`) wrote a model's purpose
    and a warehouse error as they came, ESC sequences included."""
    from assay.models import ExplorationStep, StepAction
    from assay_flows.tasks.phases import step_line

    step = ExplorationStep(run_id="r", step=1, action=StepAction.query, query="SELECT 1",
                           purpose="revenue \x1b]8;;https://e.vil/\x1b\\by month\x1b]8;;\x1b\\", row_count=3)
    assert step_line(step) == "revenue ]8;;https://e.vil/\\by month]8;;\\ -> 3 rows"
    failed = step.model_copy(update={"error": "bad \x1b[2J\x07thing"})
    assert "\x1b" not in step_line(failed) and "\x07" not in step_line(failed)
