"""`assay ask`: turn budget, enumeration detection, answer citing its SQL."""

from __future__ import annotations

import json

import pytest

from assay import limits
from assay.ask import ask, is_enumeration, turn_budget
from assay.errors import MissingKey
from assay.llm.scripted import ReplayLLM
from assay.models import Project, WarehouseConfig
from assay.settings import load_settings
from assay.store import open_store
from tests.helpers import small_warehouse


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    db = small_warehouse(tmp_path_factory.mktemp("ask") / "w.duckdb")
    return Project(id="askp", pack="ecommerce", warehouse=WarehouseConfig(kind="duckdb", settings={"path": str(db)}))


def test_budget():
    assert turn_budget("How many orders?") == limits.ASK_MAX_TURNS
    assert turn_budget("List all channels with their customers") == limits.ASK_MAX_TURNS_ENUMERATION
    assert turn_budget("anything", 7) == 7
    assert is_enumeration("show me all paid customers") and not is_enumeration("how many customers pay?")


def test_answer_cites_the_sql(project):
    llm = ReplayLLM({"ask": [
        json.dumps({"purpose": "count orders", "query": "SELECT count(*) AS n FROM orders"}),
        json.dumps({"purpose": "paid share", "query": "SELECT channel, count(*) AS n FROM customers GROUP BY 1"}),
        '{"done": true, "summary": "There are 1,000 orders (step 1)."}',
    ]})
    ans = ask(open_store(load_settings()), project, "How many orders are there?", llm=llm)
    assert ans.finished == "done" and "1,000 orders" in ans.answer
    assert [s.query for s in ans.cited()] == ["SELECT count(*) AS n FROM orders"]
    assert "Question: How many orders are there?" in llm.calls[0].messages[0].content
    system = llm.calls[0].system_text()
    assert "Your budget is 5 steps" in system
    # one budget said once (session 19: a real model read "up to 30 lookups ... per run" beside five turns as a
    # second budget), and one rule for when to finish
    assert "up to 30 lookups" not in system and "within generous limits" in system
    assert "turns" not in system.split("## Actions")[1]
    assert "as soon as the question is answered: by a query, or by earlier findings" in system


def test_out_of_turns_says_so(project):
    llm = ReplayLLM({"ask": [json.dumps({"query": "SELECT 1 AS x"})] * 2})
    ans = ask(open_store(load_settings()), project, "q", llm=llm, turns=2)
    assert ans.finished == "max_steps" and "no final answer within 2 steps" in ans.answer and len(ans.queries) == 2


def test_needs_an_llm(project):
    with pytest.raises(MissingKey, match="assay ask needs an LLM, and none is available: no ANTHROPIC_API_KEY"):
        ask(open_store(load_settings()), project, "q")
    pinned = project.model_copy(update={"llm": project.llm.model_copy(update={"provider": "none"})})
    with pytest.raises(MissingKey, match="llm.provider is 'none' in the project"):
        ask(open_store(load_settings()), pinned, "q")


def _findings_project(project, store, pid="askf"):
    import datetime as dt

    from assay.models import (DiscoveryResult, DiscoveryRun, Insight, Recommendation, RunStatus, Validation,
                              ValidationStatus)

    p = project.model_copy(update={"id": pid})
    store.save_project(p)
    store.create_run(DiscoveryRun(id=f"feedbeef-{pid}", project_id=pid, status=RunStatus.completed))
    store.save_result(DiscoveryResult(
        run_id=f"feedbeef-{pid}", project_id=pid, domain="ecommerce",
        created_at=dt.datetime(2026, 11, 20, 8, 0, tzinfo=dt.timezone.utc),
        insights=[
            Insight(id="I1", area="acquisition", name="Paid customers churn twice as often",
                    description="Customers acquired through paid channels churned at 31% against 15% for organic.",
                    affected_count=67, validation=Validation(status=ValidationStatus.confirmed)),
            Insight(id="I2", area="revenue", name="Electronics revenue fell 18% since July",
                    description="Monthly electronics revenue dropped from 120k to 98k after July."),
        ],
        recommendations=[Recommendation(id="R1", title="Cap paid acquisition spend",
                                        description="Shift budget from paid social to referral programmes.")],
    ))
    return p


def test_answer_from_earlier_findings_cites_them_with_run_and_date(project):
    store = open_store(load_settings())
    p = _findings_project(project, store)
    llm = ReplayLLM({"ask": [
        json.dumps({"search_insights": "churn of paid customers"}),
        '{"done": true, "summary": "Paid customers churn at 31% against 15% for organic (I1)."}',
    ]})
    ans = ask(store, p, "Do paid customers churn more?", llm=llm)
    system = llm.calls[0].system_text()
    assert "search_insights" in system and "feedbeef" in system and "2026-11-20" in system
    result_msg = llm.calls[1].messages[-1].content
    assert "Paid customers churn twice as often" in result_msg and "confirmed" in result_msg
    assert ans.sources == "insights" and [h.id for h in ans.cited_insights()] == ["I1"]
    assert ans.cited() == [] and "run feedbeef, 2026-11-20" in ans.answer and "not re-queried" in ans.answer


def test_answer_from_both_and_native_tools(project):
    from assay.llm.base import LLMResponse, ToolCall

    store = open_store(load_settings())
    p = _findings_project(project, store, "askf2")
    script = iter([
        LLMResponse(tool_calls=[ToolCall(id="a", name="search_insights", args={"query": "paid churn"}),
                                ToolCall(id="b", name="query", args={"sql": "SELECT count(*) AS n FROM customers "
                                                                            "WHERE channel = 'paid'",
                                                                     "purpose": "paid customers today"})]),
        LLMResponse(tool_calls=[ToolCall(id="c", name="done", args={
            "summary": "66 paid customers today (step 2); they churn twice as often (I1 of run feedbeef)."})]),
    ])
    from assay.llm.scripted import ScriptedLLM

    llm = ScriptedLLM(lambda req: next(script), tools=True)
    ans = ask(store, p, "How many paid customers, and do they churn?", llm=llm)
    assert {t.name for t in llm.calls[0].tools} >= {"search_insights", "query"}
    assert ans.sources == "insights and warehouse" and [s.step for s in ans.cited()] == [2]
    assert "not re-queried" not in ans.answer


def test_no_findings_no_insight_search(project):
    llm = ReplayLLM({"ask": [json.dumps({"search_insights": "anything"}),
                             '{"done": true, "summary": "nothing"}']})
    ans = ask(open_store(load_settings()), project, "q", llm=llm, turns=2)
    assert "search_insights" not in llm.calls[0].system_text()
    # the action is refused with a reason naming what is allowed, and costs no warehouse query
    assert "not available here" in llm.calls[1].messages[-1].content and ans.sources == "nothing"


def test_cites_insights_by_the_ids_discoveries_give_them(project):
    """A discovery names its insights area-n (conversion-1); an answer citing one is an answer from insights."""
    import datetime as dt

    from assay.models import DiscoveryResult, DiscoveryRun, Insight, RunStatus

    store = open_store(load_settings())
    p = project.model_copy(update={"id": "askids"})
    store.save_project(p)
    store.create_run(DiscoveryRun(id="cafe0001-askids", project_id=p.id, status=RunStatus.completed))
    store.save_result(DiscoveryResult(
        run_id="cafe0001-askids", project_id=p.id, domain="ecommerce",
        created_at=dt.datetime(2026, 11, 21, 8, 0, tzinfo=dt.timezone.utc),
        insights=[Insight(id="conversion-1", area="conversion", name="Android cart-to-purchase fell from July",
                          description="Purchases per add_to_cart on android fell from 0.40 to 0.11."),
                  Insight(id="conversion-10", area="conversion", name="Android sessions got shorter",
                          description="Android sessions fell from 9 to 7 minutes.")]))
    llm = ReplayLLM({"ask": [
        json.dumps({"search_insights": "android conversion"}),
        '{"done": true, "summary": "It fell from 0.40 to 0.11 from July (conversion-1 of run cafe0001, 2026-11-21)."}',
    ]})
    ans = ask(store, p, "What happened to Android conversion?", llm=llm)
    assert [h.id for h in ans.cited_insights()] == ["conversion-1"]  # not conversion-10
    assert ans.sources == "insights"
    assert "e.g. (churn-2 of run" in llm.calls[0].system_text()  # the example id has the discoveries' form


def test_the_insight_search_says_it_takes_a_step_as_the_loop_counts_it():
    """A real model (session 20) read "free of warehouse cost" as free of the step budget; the loop counts it."""
    from assay.explore.actions import tool_specs
    from assay.explore.loop import Explorer
    from assay.models import ExplorationStep, StepAction

    [spec] = tool_specs(("search_insights",))
    assert "takes one step" in spec.description
    step = ExplorationStep(run_id="ask", step=1, turn=1, action=StepAction.search_insights, purpose="x")
    assert not Explorer._free_kind(step)


def test_without_an_llm_the_cli_shows_the_closest_findings_then_why(project, monkeypatch):
    """A new user (session 24): `assay ask` without an LLM only refused, though the insight search needs none."""
    from typer.testing import CliRunner

    from assay.cli import app

    for k in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(k, raising=False)
    _findings_project(project, open_store(load_settings()), "asknollm")
    r = CliRunner().invoke(app, ["ask", "asknollm", "do paid customers churn more?"], catch_exceptions=False)
    out = " ".join(r.output.split())
    assert r.exit_code != 0 and "error: assay ask needs an LLM" in out, out
    assert "closest to the question" in out and "Paid customers churn twice as often" in out, out
    assert out.index("Paid customers churn") < out.index("error:")
