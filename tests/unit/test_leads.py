"""Statistical leads for the LLM explorer (assay/explore/leads.py): a capped statistical scan before the model
explores, its strongest candidates in the first prompt as unverified leads; off runs no scan; a failed scan
leaves the explorer without leads, never the run without an exploration. Real DuckDB (the demo warehouse),
scripted LLM."""

from __future__ import annotations

import json
import logging

import pytest

from assay.config import project_errors
from assay.estimate import Shape, estimate
from assay.explore.executor import Executor
from assay.explore.leads import HEADER, Lead, leads_section, render
from assay.llm import register_scripted
from assay.llm.scripted import ScriptedLLM
from assay.models import LLMConfig, Project, WarehouseConfig
from assay.run.lifecycle import new_run_id, run_discovery_inline
from assay.run.session import RunSession
from assay.settings import load_settings
from assay.store import open_store

REQUESTS: list = []


def handler(req):
    REQUESTS.append(req)
    if req.purpose == "explore":
        if req.meta["step"] == 1:
            return json.dumps({"purpose": "events by platform", "query": "SELECT platform, count(*) AS n FROM events "
                                                                         "GROUP BY 1 ORDER BY 1"})
        return '{"done": true, "summary": "looked at platforms"}'
    if req.purpose.startswith("analyze:"):
        return '{"insights": []}'
    if req.purpose == "recommend":
        return '{"recommendations": []}'
    raise AssertionError(req.purpose)


register_scripted("leadstest", lambda cfg: ScriptedLLM(handler))


@pytest.fixture()
def statistical_queries(monkeypatch):
    """Every query the statistical probes sent to the warehouse (through the run's executor)."""
    sent: list[str] = []
    real = Executor.run

    def run(self, sql, *a, **kw):
        if kw.get("purpose") == "statistical":
            sent.append(sql)
        return real(self, sql, *a, **kw)

    monkeypatch.setattr(Executor, "run", run)
    return sent


def _run(demo_dir, pid, **analysis):
    REQUESTS.clear()
    truth = json.loads((demo_dir / "ecommerce_truth.json").read_text())
    p = Project(id=pid, pack=truth["pack"], category=truth["category"], analyst="llm", max_steps=4,
                warehouse=WarehouseConfig(kind="duckdb", settings={"path": str(demo_dir / "ecommerce.duckdb"),
                                                                   "llm_descriptions": False}),
                llm=LLMConfig(provider="scripted", model="leadstest"), analysis=analysis)
    store = open_store(load_settings())
    store.save_project(p)
    result = run_discovery_inline(p.id, new_run_id())
    return result, store.get_run(result.run_id), store


def _explore_system(req) -> str:
    return "\n".join(b.text for b in req.system)


def test_the_first_prompt_shows_the_leads_within_the_probe_budget(demo_dir, statistical_queries):
    # the scan alone: adopting its findings after the analysis (on by default) is tests/unit/test_scan_adoption.py
    result, run, store = _run(demo_dir, "leads-on", leads_probes=12, adopt_scan_findings=False)
    explore = [r for r in REQUESTS if r.purpose == "explore"]
    first = _explore_system(explore[0])
    assert run.leads and run.leads in first  # the scan's section, as stored, opens the exploration
    assert first.index("## Leads from a statistical scan (unverified)") < first.index(run.leads[-40:])
    assert "ran 12 automatic probe queries" in first and "Check or dismiss each one with your own queries" in first
    lines = run.leads.splitlines()
    assert lines[2].startswith("1. ") and lines[3].startswith("   numbers: ")
    assert lines[4].startswith(("   probe SQL: SELECT", "   probe SQL: WITH", "   count SQL: SELECT"))
    assert all(run.leads in _explore_system(r) for r in explore)  # every request keeps them (stable prefix)
    # the budget: at most 12 queries, each counted once (a probe re-read by the detectors is not re-run)
    assert 0 < len(statistical_queries) <= 12 and len(set(statistical_queries)) == len(statistical_queries)
    assert run.telemetry.leads_probes == len(statistical_queries)
    assert run.telemetry.leads == sum(1 for ln in lines if ln[:1].isdigit())
    # the leads are not exploration steps and not insights: the analysis reported nothing and adoption is off, so
    # nothing is reported
    steps = store.steps(result.run_id)
    assert [s.purpose for s in steps if s.query] == ["events by platform"]
    assert not any(s.probe for s in steps) and result.insights == []
    assert not any(r.purpose not in ("explore", "recommend") and not r.purpose.startswith("analyze:")
                   for r in REQUESTS)  # the scan asked the model nothing
    # a resumed exploration reads the stored section: no second scan
    s = RunSession(result.run_id)
    before = len(statistical_queries)
    assert leads_section(s) == run.leads and len(statistical_queries) == before


def test_leads_off_runs_no_scan(demo_dir, statistical_queries):
    result, run, _ = _run(demo_dir, "leads-off", leads_probes="off")
    assert statistical_queries == []
    assert run.leads == "" and run.telemetry.leads_probes == 0
    explore = [r for r in REQUESTS if r.purpose == "explore"]
    assert "Leads from a statistical scan" not in _explore_system(explore[0])
    assert result.run_type.value == "full"


@pytest.mark.leads_default  # the product's default: the scan on (tests/conftest.py turns it off)
def test_a_failed_scan_leaves_the_explorer_without_leads(demo_dir, monkeypatch, caplog):
    real = Executor.run

    def broken(self, sql, *a, **kw):  # the warehouse fails every probe; the model's own queries still run
        if kw.get("purpose") == "statistical":
            raise RuntimeError("IO Error: could not read the warehouse file")
        return real(self, sql, *a, **kw)

    monkeypatch.setattr(Executor, "run", broken)
    with caplog.at_level(logging.WARNING, logger="assay"):
        result, run, store = _run(demo_dir, "leads-broken")
    failed = [r for r in caplog.records if "leads: the statistical scan failed" in r.getMessage()]
    assert len(failed) == 1 and "could not read the warehouse file" in failed[0].getMessage()
    assert run.leads == "" and result.run_type.value == "full"
    explore = [r for r in REQUESTS if r.purpose == "explore"]
    assert len(explore) == 2 and "Leads from a statistical scan" not in _explore_system(explore[0])
    assert sum(1 for s in store.steps(result.run_id) if s.ok and s.query) == 1  # the explorer still explored


def test_the_leads_section_is_capped_and_says_what_leads_are():
    leads = [Lead(headline=f"segment {i} has a much lower rate", numbers="0.02 against a typical 0.6 (n = 1,000)",
                  sql="SELECT level, avg(won) FROM attempts GROUP BY 1", kind="outlier_segment", score=0.9)
             for i in range(40)]
    text = render(leads, 25)
    assert text.startswith(HEADER.format(probes=25))
    assert "1. segment 0 has a much lower rate (outlier segment, score 0.90)\n" \
           "   numbers: 0.02 against a typical 0.6 (n = 1,000)\n" \
           "   probe SQL: SELECT level, avg(won) FROM attempts GROUP BY 1" in text
    assert len(text) <= 7_000 and "NOT findings" in text and "Do not stop at them" in text
    assert render([], 25) == ""


@pytest.mark.leads_default  # the product's default: the scan on (tests/conftest.py turns it off)
def test_leads_probes_is_checked_and_off_is_zero():
    base = {"id": "p", "warehouse": {"kind": "duckdb", "settings": {"path": "x.duckdb"}}}
    assert project_errors({**base, "analysis": {"leads_probes": False}})[0].analysis.leads_probes == 0
    assert Project(id="p").analysis.leads_probes == 40
    _, errors = project_errors({**base, "analysis": {"leads_probes": -1}})
    assert any(e.startswith("analysis.leads_probes") for e in errors), errors
    _, errors = project_errors({**base, "analysis": {"lead_probes": 5}})
    assert any("unknown key" in e and "leads_probes" in e for e in errors), errors


def test_the_estimate_counts_the_scan():
    p = Project(id="p", llm=LLMConfig(model="claude-sonnet-4-5"))
    kw = dict(system_chars=20_000, catalog_chars=5_000, area_prompt_chars=[8_000], recommend_prompt_chars=6_000,
              max_steps=30, analyst="llm", shape=Shape())
    off, on = estimate(p, **kw), estimate(p, **kw, leads_probes=25)
    assert on.leads_queries == 25 and off.leads_queries == 0
    assert any("up to 25 probe queries" in n for n in on.notes)
    ex_off, ex_on = off.phases[0], on.phases[0]
    assert ex_on.calls == ex_off.calls and ex_on.input_tokens > ex_off.input_tokens
    assert estimate(p, **{**kw, "analyst": "statistical"}, leads_probes=25).leads_queries == 0


def test_breadth_first_reaches_every_behaviour_kind_and_table_before_a_second_probe_of_any():
    from assay.stats.planner import BEHAVIOUR_KINDS, Probe, breadth_first

    def pr(kind, table, n):
        return Probe(kind, table, f"{kind} {table} {n}", f"SELECT {n}")

    # a depth-first plan: every season and breakdown probe of one table, then the others, behaviour last
    plan = ([pr("season", "a", i) for i in range(3)] + [pr("breakdown", "a", i) for i in range(3)]
            + [pr("breakdown", "b", i) for i in range(2)] + [pr("crosstab", "b", 0)]
            + [pr("retention", "u", i) for i in range(3)] + [pr("concentration", "b", 0)]
            + [pr("joined_breakdown", "a", 0), pr("joined_breakdown", "a", 1), pr("joined_breakdown", "b", 0)])
    order = breadth_first(plan)
    assert sorted(p.purpose for p in order) == sorted(p.purpose for p in plan)  # the same probes
    kinds = [p.kind for p in order]
    # one of each behaviour kind, in the stated order, before a second of any
    assert kinds[:4] == ["retention", "concentration", "breakdown", "joined_breakdown"]
    assert [k for k in BEHAVIOUR_KINDS if k in kinds[:4]] == kinds[:4]
    # within a kind, the tables take turns (the plan's order kept within a table)
    assert [p.purpose for p in order if p.kind == "breakdown"] == ["breakdown a 0", "breakdown b 0", "breakdown a 1",
                                                                   "breakdown b 1", "breakdown a 2"]
    assert [p.purpose for p in order if p.kind == "joined_breakdown"][:2] == ["joined_breakdown a 0",
                                                                              "joined_breakdown b 0"]
    # the data's shape (seasons, mixes) only after every behaviour probe
    last_behaviour = max(i for i, k in enumerate(kinds) if k in BEHAVIOUR_KINDS)
    assert all(i > last_behaviour for i, k in enumerate(kinds) if k in ("season", "crosstab"))
    assert breadth_first([]) == []


def test_the_scan_reaches_retention_concentration_and_each_table_s_segments_within_a_small_budget(demo_dir,
                                                                                                   monkeypatch):
    """The leads scan spends its budget on behaviour: on a warehouse with an entity table and three activity tables,
    20 probes reach retention by segment, the concentration of a measure over entities and a measure of each
    activity table by the entity's segments; the seasonality probes wait (the statistical analyst's own plan, run
    on its full budget, keeps its order)."""
    import assay.stats.planner as planner

    kinds: list[tuple[str, str]] = []
    real = planner.run_probe

    def spy(executor, probe, *a, **kw):
        kinds.append((probe.kind, probe.table))
        return real(executor, probe, *a, **kw)

    monkeypatch.setattr(planner, "run_probe", spy)
    truth = json.loads((demo_dir / "gaming_truth.json").read_text())
    p = Project(id="leads-breadth", pack=truth["pack"], category=truth["category"], analyst="llm", max_steps=2,
                warehouse=WarehouseConfig(kind="duckdb", settings={"path": str(demo_dir / "gaming.duckdb"),
                                                                   "llm_descriptions": False}),
                llm=LLMConfig(provider="scripted", model="leadstest"), analysis={"leads_probes": 20})
    store = open_store(load_settings())
    store.save_project(p)
    REQUESTS.clear()
    run_discovery_inline(p.id, new_run_id())
    assert len(kinds) == 20
    got = {k for k, _ in kinds}
    assert {"retention", "concentration", "joined_breakdown", "breakdown"} <= got, kinds
    assert "season" not in got and "crosstab" not in got and "correlation" not in got
    profiles = [i for i, (k, _) in enumerate(kinds) if k == "profile"]
    assert profiles == list(range(len(profiles)))  # the profiles the plan is made from, then only behaviour
    assert len({t for k, t in kinds if k == "joined_breakdown"}) >= 2  # more than one activity table by segment
