"""The statistical scan's findings join an LLM run (assay/run/adopt.py): a finding the statistical analyst would
report from the scan's probes and no LLM insight covers becomes an insight of the run, marked with its origin,
built and verified as the statistical analyst's, citing the stored probe step; a covered one is not repeated;
off lists the leads only; a resumed run rebuilds it from the store without re-scanning. Real DuckDB (the demo
warehouse), scripted LLM."""

from __future__ import annotations

import json

import pytest

from assay.config import project_errors
from assay.llm import register_scripted
from assay.llm.scripted import ScriptedLLM
from assay.models import LLMConfig, Project, StepAction, ValidationStatus, WarehouseConfig
from assay.report.markdown import render_markdown
from assay.run.adopt import ORIGIN, adopt_scan_findings
from assay.run.lifecycle import new_run_id, run_discovery_inline
from assay.run.phases import recommendations_phase
from assay.run.session import RunSession
from assay.settings import load_settings
from assay.store import open_store

REQUESTS: list = []

# the model's one finding: the paid_social customers' churn (a lead of the scan); it leaves android's fall to the scan
PAID_SOCIAL = {"name": "paid_social customers rarely come back",
               "description": "Customers acquired through paid social come back for a second order far less often "
                              "than those of other channels.",
               "severity": "high", "source_steps": [1], "segment": "acquisition_channel = 'paid_social'"}


def handler(req):
    REQUESTS.append(req)
    if req.purpose == "explore":
        if req.meta["step"] == 1:
            return json.dumps({"purpose": "customers by channel",
                               "query": "SELECT acquisition_channel, count(*) AS n FROM customers GROUP BY 1 ORDER BY 1"})
        return '{"done": true, "summary": "looked at channels"}'
    if req.purpose.startswith("analyze:"):
        first = sum(1 for r in REQUESTS if r.purpose.startswith("analyze:")) == 1
        return json.dumps({"insights": [PAID_SOCIAL] if first else []})
    if req.purpose == "recommend":
        return '{"recommendations": []}'
    raise AssertionError(f"unexpected LLM request: {req.purpose}")


register_scripted("adopttest", lambda cfg: ScriptedLLM(handler))


def _run(demo_dir, pid, **analysis):
    REQUESTS.clear()
    truth = json.loads((demo_dir / "ecommerce_truth.json").read_text())
    p = Project(id=pid, pack=truth["pack"], category=truth["category"], analyst="llm", max_steps=4,
                warehouse=WarehouseConfig(kind="duckdb", settings={"path": str(demo_dir / "ecommerce.duckdb"),
                                                                   "llm_descriptions": False}),
                llm=LLMConfig(provider="scripted", model="adopttest"), analysis={"leads_probes": 40, **analysis})
    store = open_store(load_settings())
    store.save_project(p)
    result = run_discovery_inline(p.id, new_run_id())
    return result, store


@pytest.fixture(scope="module")
def adopted_run(demo_dir):
    result, store = _run(demo_dir, "adopt-on")
    return result, store, list(REQUESTS)


def _android(insights):
    return [i for i in insights if "android" in (i.name + i.description).lower()]


def test_an_uncovered_scan_finding_becomes_a_verified_insight_citing_its_stored_probe(adopted_run):
    result, store, requests = adopted_run
    scan = [i for i in result.insights if i.origin == ORIGIN]
    android = _android(scan)
    assert android, [i.name for i in result.insights]
    ins = android[0]
    # built as the statistical analyst builds it: generated count SQL, claims with their SQL, each confirmed
    assert ins.verification_sql and ins.claims and ins.affected_count
    assert all(c.verdict == ValidationStatus.confirmed for c in ins.claims), [c.verdict for c in ins.claims]
    assert ins.validation.status == ValidationStatus.confirmed
    assert "-scan-" in ins.id and ins.area in result.summary["areas_ok"]
    # it cites a stored step of the run of its own kind: the scan's probe, with its result
    steps = {st.step: st for st in store.steps(result.run_id)}
    probe = steps[ins.source_steps[0]]
    assert probe.action == StepAction.scan and probe.probe and probe.digest is not None
    # ... which is no exploration step: not counted, not numbered among the model's, never offered to an area
    explored = [st for st in steps.values() if st.action != StepAction.scan]
    assert result.total_steps == sum(1 for st in explored if st.action != StepAction.done)
    assert min(n for n, st in steps.items() if st.action == StepAction.scan) > max(st.step for st in explored)
    # (never offered to an area's picker: the areas ran before adoption here; a rerun after it is
    # test_an_area_rerun_after_adoption_reads_only_what_the_model_explored)
    # no LLM request for it: the model was asked to explore, analyse and recommend only
    assert {r.purpose.split(":")[0] for r in requests} <= {"explore", "analyze", "recommend"}
    tel = store.get_run(result.run_id).telemetry
    # counted as adopted, before the run's findings merge (an adopted level gap folds into its adopted change)
    adopted = {i.id for i in scan} | {m for i in scan for m in i.merged_from if "-scan-" in m}
    assert tel.scan_adopted == len(adopted) and tel.scan_adoption_queries > 0
    assert tel.steps_by_action.get("scan") is None  # the exploration's own counters are untouched


def test_a_covered_lead_is_not_adopted_again(adopted_run):
    result, _, _ = adopted_run
    paid = [i for i in result.insights if "paid" in (i.name + i.description + (i.segment or "")).lower()]
    assert len(paid) == 1 and paid[0].origin is None, [(i.name, i.origin) for i in paid]
    assert not result.uncovered_leads  # what the scan flagged is reported, by the model or adopted


def test_the_report_says_where_an_adopted_insight_comes_from(adopted_run):
    result, _, _ = adopted_run
    md = render_markdown(result)
    assert f"origin: {ORIGIN}" in md
    assert md.count(f"origin: {ORIGIN}") == sum(1 for i in result.insights if i.origin)


def test_off_adopts_nothing_and_lists_the_uncovered_leads(demo_dir):
    result, store = _run(demo_dir, "adopt-off", adopt_scan_findings=False)
    assert not any(i.origin for i in result.insights)
    assert not any(st.action == StepAction.scan for st in store.steps(result.run_id))
    assert any("android" in lead.lower() for lead in result.uncovered_leads), result.uncovered_leads
    assert not any("paid_social" in lead for lead in result.uncovered_leads)  # the model covered it


def test_a_resumed_run_rebuilds_the_adoption_from_the_store_without_scanning(adopted_run, monkeypatch):
    result, store, _ = adopted_run
    stored = store.area_results(result.run_id)  # as adopted, before the run's findings merge
    before = sorted((i.id, i.name, i.validation.status.value) for ins, _ in stored.values() for i in ins if i.origin)
    n_steps = len(store.steps(result.run_id))

    def no_scan(*a, **kw):
        raise AssertionError("the scan ran again")

    monkeypatch.setattr("assay.explore.leads.scan", no_scan)
    monkeypatch.setattr("assay.stats.planner.explore_statistically", no_scan)
    store.db.candidates.delete_many({"_id": result.run_id})  # a new process: only the stored scan is left
    REQUESTS.clear()
    s = RunSession(result.run_id)
    recommendations_phase(s)  # a retried recommendations task adopts again: the same findings, once
    areas = s.store.area_results(result.run_id)
    again = sorted((i.id, i.name, i.validation.status.value) for ins, _ in areas.values() for i in ins if i.origin)
    assert again == before
    assert len(store.steps(result.run_id)) == n_steps
    assert adopt_scan_findings(RunSession(result.run_id)) == len(before)


def test_adopt_scan_findings_is_a_checked_setting():
    base = {"id": "p", "warehouse": {"kind": "duckdb", "settings": {"path": "x.duckdb"}}}
    assert Project(id="p").analysis.adopt_scan_findings is True
    assert project_errors({**base, "analysis": {"adopt_scan_findings": False}})[0].analysis.adopt_scan_findings is False
    _, errors = project_errors({**base, "analysis": {"adopt_scan_finding": False}})
    assert any("unknown key" in e and "adopt_scan_findings" in e for e in errors), errors
    _, errors = project_errors({**base, "analysis": {"adopt_scan_findings": "sometimes"}})
    assert any(e.startswith("analysis.adopt_scan_findings") for e in errors), errors


def test_an_llm_insight_naming_the_findings_segment_covers_it():
    """Round 9 (gaming): the model's own monetization insight explained cross_promo's revenue jump by its 7 whales;
    the scan's change point of it ("The total price usd for cross_promo increased from 2026-04-01", segment
    acquisition_channel=cross_promo) was adopted beside it, because its lead line stated no segment. Named, the value
    covers it, as a prompt lead "acquisition_channel = cross_promo" is covered; an insight that never names it does
    not (the lead is then compared in meaning, here with nothing close)."""
    import numpy as np

    from assay.findings import uncovered_leads
    from assay.models import Insight
    from assay.run.adopt import lead_line

    scan = Insight(id="monetization-scan-1", area="monetization", name="The total price usd for cross_promo "
                   "increased from 2026-04-01", description="The monthly total price usd for cross_promo "
                   "(acquisition channel) rose from 286.3 to 1,127 from 2026-04-01 (p = 0.0002).",
                   segment="acquisition_channel=cross_promo")
    line = lead_line(scan)
    explained = Insight(id="monetization-2", area="monetization", name="85 payers bring 68% of revenue",
                        description="Channel revenue follows these few players: cross_promo's quarterly revenue went "
                                    "from 1,144.80 to 3,762.50 as its 7 whales started buying.")
    other = Insight(id="levels-1", area="levels", name="level 42 is a difficulty wall", description="2% win rate")

    basis: dict[str, int] = {}

    def far(texts):  # every distinct text its own direction: nothing is close in meaning
        return np.array([np.eye(64)[basis.setdefault(t, len(basis))] for t in texts])

    assert uncovered_leads([line], [explained], far) == []
    assert uncovered_leads([line], [other], far) == [line]


def test_an_area_rerun_after_adoption_reads_only_what_the_model_explored(adopted_run):
    """The reviewer's case: once adoption stored its probes as steps of the run, a rerun of an area (`assay rerun
    --area`) offered them to the area's step picker and so to the model's analysis prompt. They are evidence of the
    adopted findings, not steps of the exploration: the rerun's picker sees the model's steps only, and the rerun
    adopts again from the stored scan."""
    from assay.run.lifecycle import rerun_areas_inline

    result, store, _ = adopted_run
    scan = {st.step for st in store.steps(result.run_id) if st.action == StepAction.scan}
    assert scan
    area = next(i.area for i in result.insights if i.origin == ORIGIN)
    REQUESTS.clear()
    again = rerun_areas_inline(result.run_id, [area])
    considered = {d["step"] for log in again.analysis_log if log.area == area
                  for d in log.selected_steps + log.dropped_steps}
    assert not considered & scan, (sorted(considered), sorted(scan))
    assert any(i.origin == ORIGIN for i in again.insights)


def test_turned_off_after_an_adoption_the_adopted_insights_go(demo_dir):
    """The reviewer's case: a run whose findings were adopted, recommended again (a retry, a rerun) after the project
    turned adoption off, kept them. Off means the run reports the model's insights only."""
    result, store = _run(demo_dir, "adopt-then-off")
    assert any(i.origin == ORIGIN for i in result.insights)
    p = store.get_project("adopt-then-off")
    store.save_project(p.model_copy(update={"analysis": p.analysis.model_copy(update={"adopt_scan_findings": False})}))
    s = RunSession(result.run_id)
    assert adopt_scan_findings(s) == 0
    left = [i for ins, _ in store.area_results(result.run_id).values() for i in ins]
    assert left and not any(i.origin == ORIGIN for i in left)
    assert store.get_run(result.run_id).telemetry.scan_adopted == 0


LISTED: list = []


def listing_handler(req):
    """The model reports android's fall in its own words and figures (none of the scan's), and lists the lead."""
    import re

    LISTED.append(req)
    if req.purpose.startswith("analyze:") and sum(1 for r in LISTED if r.purpose.startswith("analyze:")) == 1:
        prompt = " ".join(b.text for b in req.system)
        labels = dict((h.lower(), f"L{n}") for n, h in re.findall(r"^L(\d+)\. (.+)$", prompt, re.M))
        android = [label for h, label in labels.items() if "android" in h]
        assert android, prompt[-3000:]
        mine = {"name": "Fewer orders come from phones of one platform",
                "description": "Mobile ordering on that platform has been sliding for months; see the channel mix.",
                "severity": "medium", "source_steps": [1], "leads": android + ["L99", "not a label"]}
        return json.dumps({"insights": [PAID_SOCIAL, mine]})
    return handler(req)


register_scripted("adopttest-listed", lambda cfg: ScriptedLLM(listing_handler))


def test_a_lead_the_model_lists_as_reported_is_not_adopted(demo_dir, adopted_run):
    """Round 21 (gaming): the model explained the revenue growth and the rise in average price by its whales, in
    figures of its own window; neither its words nor its numbers tied its insight to the scan's two leads, which were
    adopted beside it. The analysis prompt numbers the leads (L1, L2, ...) and an insight lists those it reports:
    a listed lead is covered whatever the insight's words and figures; the same run without the list adopts it."""
    without, _, _ = adopted_run
    assert _android([i for i in without.insights if i.origin == ORIGIN])
    LISTED.clear()
    truth = json.loads((demo_dir / "ecommerce_truth.json").read_text())
    p = Project(id="adopt-listed", pack=truth["pack"], category=truth["category"], analyst="llm", max_steps=4,
                warehouse=WarehouseConfig(kind="duckdb", settings={"path": str(demo_dir / "ecommerce.duckdb"),
                                                                   "llm_descriptions": False}),
                llm=LLMConfig(provider="scripted", model="adopttest-listed"), analysis={"leads_probes": 40})
    store = open_store(load_settings())
    store.save_project(p)
    result = run_discovery_inline(p.id, new_run_id())
    mine = next(i for i in result.insights if i.name.startswith("Fewer orders"))
    # the labels resolved to the leads' headlines; unknown ones dropped
    assert mine.leads and all("android" in h.lower() for h in mine.leads), mine.leads
    assert not _android([i for i in result.insights if i.origin == ORIGIN]), [i.name for i in result.insights]
    assert not [lead for lead in result.uncovered_leads if "android" in lead.lower()]
    assert f"reports the statistical scan's lead{'s' if len(mine.leads) > 1 else ''}: {mine.leads[0]}" \
        in render_markdown(result)  # the report says why the scan's finding is not listed beside it
