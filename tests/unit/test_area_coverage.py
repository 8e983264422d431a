"""Every analysis area gets evidence (round-2/3 real-model runs): the explorer spent its steps on the first
findings it met and never looked at some areas, whose analysis then had nothing to report. The exploration
prompt names the areas the analysis will report on, and each progress line names the areas no query has
looked at yet, judged by what each query says it is for (its purpose), not by the tables its SQL reads."""

from __future__ import annotations

import json

import duckdb
import pytest

from assay.analysis.discipline import INSIGHTS_CONTRACT
from assay.analysis.picker import uncovered_areas
from assay.explore.prompt import render_exploration_prompt
from assay.llm.scripted import ReplayLLM
from assay.models import AnalysisArea, ExplorationStep, Project, StepAction, WarehouseConfig
from assay.packs import load_pack
from tests.helpers import make_explorer

AREAS = [AnalysisArea(id="funnel", name="Conversion", description="Visit to signup funnel", keywords=["funnel", "signup"]),
         AnalysisArea(id="money", name="Revenue", description="Billing by plan", keywords=["revenue", "billing"]),
         AnalysisArea(id="quality", name="Data quality", description="Broken rows", keywords=["null", "missing"])]


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("cov") / "cov.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE accounts AS SELECT i AS account_id, i % 3 AS plan, i * 1.5 AS revenue FROM range(1, 31) r(i)")
    con.close()
    return path


def step(n, purpose, action=StepAction.query, **kw):
    return ExplorationStep(run_id="r", step=n, action=action, purpose=purpose, query="SELECT 1", **kw)


def test_an_area_is_covered_by_a_query_whose_purpose_names_it():
    steps = [step(1, "Signup funnel by week"), step(2, "Revenue by plan", refused="not allowed"),
             step(3, "Accounts with a missing plan", error="Binder Error")]
    assert [a.id for a in uncovered_areas(AREAS, steps)] == ["money", "quality"]  # refused / failed: nothing seen
    steps.append(step(4, "Monthly billing totals"))
    assert [a.id for a in uncovered_areas(AREAS, steps)] == ["quality"]
    steps.append(step(5, "Rows where plan is null"))
    assert uncovered_areas(AREAS, steps) == []


def test_the_sql_alone_does_not_cover_an_area():
    s = step(1, "Accounts per plan")
    s.query = "SELECT plan, sum(revenue) AS revenue FROM accounts GROUP BY plan"
    assert "money" in [a.id for a in uncovered_areas(AREAS, [s])]


def test_each_progress_line_names_the_areas_not_yet_looked_at(db):
    def q(sql, purpose):
        return json.dumps({"thinking": "", "purpose": purpose, "query": sql})

    llm = ReplayLLM({"explore": [q("SELECT count(*) AS n FROM accounts", "Signup funnel size"),
                                 q("SELECT plan, sum(revenue) AS r FROM accounts GROUP BY 1", "Revenue by plan"),
                                 q("SELECT count(*) AS n FROM accounts WHERE plan IS NULL", "Missing plans"),
                                 '{"done": true, "summary": "s"}']})
    make_explorer(db, llm, max_steps=5, areas=AREAS).run()
    lines = [c.messages[-1].content for c in llm.calls[1:4]]
    assert "Areas none of your queries has looked at yet" in lines[0] and "Revenue, Data quality." in lines[0]
    assert "only from your steps): Data quality." in lines[1]
    assert "Areas none" not in lines[2]


def test_one_area_runs_say_nothing_about_coverage(db):
    llm = ReplayLLM({"explore": [json.dumps({"thinking": "", "purpose": "x", "query": "SELECT 1 AS one"}),
                                 '{"done": true, "summary": "s"}']})
    make_explorer(db, llm, max_steps=3, areas=AREAS[:1]).run()
    assert "Areas none" not in llm.calls[1].messages[-1].content


def test_the_exploration_prompt_lists_the_areas_of_the_run():
    pack = load_pack("ecommerce", "multi_category")
    p = Project(id="p", pack="ecommerce", category="multi_category", warehouse=WarehouseConfig(kind="duckdb", settings={}))
    text = render_exploration_prompt(p, pack, "- main.t (1 cols, ~1 rows): a", 30)
    assert "## Areas the analysis will report on" in text
    for a in pack.areas:
        assert f"- {a.name}: {a.description}" in text
    only = render_exploration_prompt(p, pack, "- main.t (1 cols, ~1 rows): a", 30, areas=pack.areas[:2])
    assert pack.areas[2].description not in only
    assert "## Areas the analysis" not in render_exploration_prompt(p, pack, "", 30, areas=pack.areas[:1])


def test_the_claim_example_is_no_demo_warehouse_finding():
    """The contract's example claim is only a form: it names no table, column or value of a warehouse the
    product ships (an example that is one of the demo's findings coaches the model towards it)."""
    from assay.demo import ecommerce, gaming

    example = INSIGHTS_CONTRACT[INSIGHTS_CONTRACT.index("Example"):INSIGHTS_CONTRACT.index("A claim with no comparison")]
    words = set()
    for mod in (ecommerce, gaming):
        spec = mod.build(scale=0.01) if hasattr(mod, "build") else None
        if spec is not None:
            words |= {p.segment.lower() for p in spec.patterns} | {c.lower() for t in spec.tables.values() for c in t.columns}
    words |= {"android", "platform", "cart", "event_at"}
    hits = [w for w in words if len(w) > 3 and w in example.lower()]
    assert hits == [], hits
    flat = " ".join(INSIGHTS_CONTRACT.split())
    assert "at most 3 insights" in flat and "no difference" in flat
